/**
 * Prompt-injection detector. One pass over the lower-cased text finds anchor words; each
 * signal whose anchor occurs runs in a window around it; weak cues and boosters run only
 * around what fired; evidence within a window combines by noisy-OR. Disguised stretches
 * (zero-width, homoglyphs, spacing, leetspeak) are normalised and scanned again, and
 * base64 runs that decode to text are decoded and scanned. Quoted phrases inside talk
 * *about* injection are damped, so training material and questions pass.
 */
import type { Finding } from './types.ts';
import { META_DISCUSSION, SIGNALS, type InjectionCategory, type Signal } from './injection-patterns.ts';
import { disguisedWindows, normalizeWindow } from './normalize.ts';
import { dedupeOverlaps } from './spans.ts';

interface Hit {
  category: InjectionCategory;
  weight: number;
  start: number;
  end: number;
}

const ANCHOR_WINDOW = 250;
const EVIDENCE_WINDOW = 300;
/** Weight added to evidence found only after undoing a disguise: hiding is itself a tell. */
const DISGUISE_WEIGHT = 0.3;

const ANCHORED = SIGNALS.filter((s) => s.anchors.length > 0);
const UNANCHORED = SIGNALS.filter((s) => s.anchors.length === 0);

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A trie-shaped alternation: V8 checks one first character per position instead of every token. */
function trie(tokens: string[]): string {
  interface Node {
    end: boolean;
    next: Map<string, Node>;
  }
  const root: Node = { end: false, next: new Map() };
  for (const t of tokens) {
    let n = root;
    for (const ch of t) {
      let child = n.next.get(ch);
      if (!child) {
        child = { end: false, next: new Map() };
        n.next.set(ch, child);
      }
      n = child;
    }
    n.end = true;
  }
  const build = (n: Node): string => {
    const alts = [...n.next].map(([ch, child]) => escape(ch) + build(child));
    if (alts.length === 0) return '';
    const body = alts.length === 1 ? (alts[0] ?? '') : `(?:${alts.join('|')})`;
    return n.end ? `(?:${body})?` : body;
  };
  return build(root);
}

const ALL_TOKENS = [...new Set(ANCHORED.flatMap((s) => s.anchors))];
const isAscii = (t: string): boolean => /^[\x20-\x7e]+$/.test(t);
const WORD_TOKENS = ALL_TOKENS.filter((t) => isAscii(t) && /^\w/.test(t));
const MARK_TOKENS = ALL_TOKENS.filter((t) => isAscii(t) && !/^\w/.test(t));
const NON_ASCII_TOKENS = ALL_TOKENS.filter((t) => !isAscii(t));
/** Over lower-cased text, so no `i` flag: case-insensitive alternations are several times slower. */
const ASCII_ANCHORS = new RegExp(`\\b${trie(WORD_TOKENS)}|${MARK_TOKENS.map(escape).join('|')}`, 'g');
const OTHER_ANCHORS = new RegExp(trie(NON_ASCII_TOKENS), 'g');
const NEEDS_OTHER = /[\u00c0-\u024f\u0400-\u04ff\u0600-\u06ff\u0900-\u097f\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]/;

/** token -> signals that declare an anchor which is a prefix of it. */
const SIGNALS_BY_TOKEN = new Map<string, Signal[]>();
function signalsFor(token: string): Signal[] {
  let found = SIGNALS_BY_TOKEN.get(token);
  if (!found) {
    found = ANCHORED.filter((s) => s.anchors.some((a) => token.startsWith(a) || a.startsWith(token)));
    SIGNALS_BY_TOKEN.set(token, found);
  }
  return found;
}

type Windows = Map<Signal, Array<[number, number]>>;

function addWindow(windows: Windows, signal: Signal, from: number, to: number): void {
  const list = windows.get(signal);
  if (!list) {
    windows.set(signal, [[from, to]]);
    return;
  }
  const last = list[list.length - 1];
  if (last && from <= last[1]) last[1] = Math.max(last[1], to);
  else list.push([from, to]);
}

function collectAnchors(text: string, lower: string, re: RegExp, windows: Windows): void {
  re.lastIndex = 0;
  for (let m = re.exec(lower); m !== null; m = re.exec(lower)) {
    const from = Math.max(0, m.index - ANCHOR_WINDOW);
    const to = Math.min(text.length, m.index + m[0].length + ANCHOR_WINDOW);
    for (const signal of signalsFor(m[0])) addWindow(windows, signal, from, to);
  }
}

function runSignal(signal: Signal, text: string, from: number, to: number, out: Hit[]): void {
  const slice = text.slice(from, to);
  signal.re.lastIndex = 0;
  for (let m = signal.re.exec(slice); m !== null; m = signal.re.exec(slice)) {
    if (m[0] === '') {
      signal.re.lastIndex++;
      continue;
    }
    out.push({ category: signal.category, weight: signal.weight, start: from + m.index, end: from + m.index + m[0].length });
  }
}

/** Raw evidence in `text` (no disguise handling): anchored signals, then cues around them. */
function evidence(text: string): Hit[] {
  const lower = text.toLowerCase();
  const windows: Windows = new Map();
  if (lower.length === text.length) {
    collectAnchors(text, lower, ASCII_ANCHORS, windows);
    if (NEEDS_OTHER.test(text)) collectAnchors(text, lower, OTHER_ANCHORS, windows);
  } else {
    // Rare: lower-casing changed the length (e.g. U+0130), so offsets would drift; run all.
    for (const s of ANCHORED) addWindow(windows, s, 0, text.length);
  }
  const hits: Hit[] = [];
  for (const [signal, list] of windows) for (const [from, to] of list) runSignal(signal, text, from, to, hits);
  if (hits.length === 0) return hits;
  const around: Array<[number, number]> = [];
  for (const h of [...hits].sort((a, b) => a.start - b.start)) {
    const from = Math.max(0, h.start - EVIDENCE_WINDOW);
    const to = Math.min(text.length, h.end + EVIDENCE_WINDOW);
    const last = around[around.length - 1];
    if (last && from <= last[1]) last[1] = Math.max(last[1], to);
    else around.push([from, to]);
  }
  for (const signal of UNANCHORED) for (const [from, to] of around) runSignal(signal, text, from, to, hits);
  return dedupeHits(hits);
}

function dedupeHits(hits: Hit[]): Hit[] {
  const seen = new Set<string>();
  return hits.filter((h) => {
    const key = `${h.category}:${h.weight}:${h.start}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

const QUOTES = '"\'“”„«»‘’`';

/** Whether [start, end) sits between quote marks on its own line. */
function quoted(text: string, start: number, end: number): boolean {
  const isQuote = (i: number): boolean => {
    const ch = text[i] ?? '';
    if (!QUOTES.includes(ch)) return false;
    // An apostrophe between letters ("don't") is not a quote mark.
    return !(ch === "'" || ch === '’') || !/\w/.test(text[i - 1] ?? '') || !/\w/.test(text[i + 1] ?? '');
  };
  let open = false;
  for (let i = start - 1; i >= Math.max(0, start - 80) && text[i] !== '\n'; i--) {
    if (isQuote(i)) {
      open = true;
      break;
    }
  }
  if (!open) return false;
  for (let i = end; i < Math.min(text.length, end + 120) && text[i] !== '\n'; i++) if (isQuote(i)) return true;
  return false;
}

/** Noisy-OR of the strongest hit per signal category and weight within the evidence window. */
function score(hits: Hit[], target: Hit, text: string): number {
  const used = new Set<string>();
  let miss = 1;
  for (const h of hits) {
    if (h.end < target.start - EVIDENCE_WINDOW || h.start > target.end + EVIDENCE_WINDOW) continue;
    const key = `${h.category}:${h.weight}`;
    if (used.has(key)) continue;
    used.add(key);
    miss *= 1 - h.weight;
  }
  let p = 1 - miss;
  const context = text.slice(Math.max(0, target.start - EVIDENCE_WINDOW), target.end + EVIDENCE_WINDOW);
  if (META_DISCUSSION.test(context)) p *= quoted(text, target.start, target.end) ? 0.35 : 0.75;
  return Math.min(0.99, p);
}

function toFindings(hits: Hit[], text: string): Finding[] {
  const findings: Finding[] = [];
  for (const h of hits) {
    if (h.category === 'booster') continue;
    findings.push({ guardrail: 'prompt-injection', category: h.category, score: score(hits, h, text), start: h.start, end: h.end });
  }
  return findings;
}

/** Evidence in normalised copies of disguised stretches, mapped back to original offsets. */
function disguisedEvidence(text: string): Hit[] {
  const hits: Hit[] = [];
  for (const [from, to] of disguisedWindows(text)) {
    const n = normalizeWindow(text, from, to);
    if (n.text === text.slice(from, to)) continue;
    const found = evidence(n.text);
    if (found.length === 0) continue;
    for (const h of found) {
      const start = n.map[h.start] ?? from;
      const end = (n.map[Math.max(h.start, h.end - 1)] ?? start) + 1;
      hits.push({ ...h, start, end });
    }
    const first = found[0];
    if (first) hits.push({ category: 'booster', weight: DISGUISE_WEIGHT, start: n.map[first.start] ?? from, end: n.map[first.start] ?? from });
  }
  return hits;
}

const BASE64_RUN = /(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{24,}={0,2}(?![A-Za-z0-9+/=_-])/g;

/** Base64 payloads that decode to readable text are scanned as the text they hide. */
function base64Findings(text: string, depth: number): Finding[] {
  const out: Finding[] = [];
  BASE64_RUN.lastIndex = 0;
  for (let m = BASE64_RUN.exec(text); m !== null; m = BASE64_RUN.exec(text)) {
    const run = m[0];
    if (!/[a-z]/.test(run) || !/[A-Z]/.test(run)) continue;
    const decoded = Buffer.from(run.replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('utf8');
    if (!readable(decoded)) continue;
    const inner = detectDepth(decoded, depth + 1);
    const top = inner.reduce<Finding | undefined>((a, f) => (a && a.score >= f.score ? a : f), undefined);
    if (!top) continue;
    out.push({ ...top, score: Math.min(0.99, top.score + 0.1), start: m.index, end: m.index + run.length });
  }
  return out;
}

function readable(s: string): boolean {
  if (s.length < 12 || !s.includes(' ')) return false;
  let ok = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if ((c >= 32 && c < 127) || c === 10 || c === 9 || (c >= 0xa0 && c !== 0xfffd)) ok++;
  }
  return ok / s.length > 0.95;
}

function detectDepth(text: string, depth: number): Finding[] {
  const hits = evidence(text);
  const disguised = disguisedEvidence(text);
  const all = disguised.length > 0 ? dedupeHits([...hits, ...disguised]) : hits;
  const findings = toFindings(all, text);
  if (depth < 2) findings.push(...base64Findings(text, depth));
  return dedupeOverlaps(findings);
}

export function detect(text: string): Finding[] {
  return detectDepth(text, 0);
}
