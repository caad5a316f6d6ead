/**
 * Prompt-injection detector. One pass over the lower-cased text finds anchor words; each
 * signal whose anchor occurs runs in a window around it; weak cues and boosters run only
 * around what fired; evidence within a window combines by noisy-OR. Disguised stretches
 * (zero-width, homoglyphs, spacing, leetspeak) are normalised and scanned again, and
 * base64 runs that decode to text are decoded and scanned. Quoted phrases inside talk
 * *about* injection are damped, so training material and questions pass.
 */
import type { Finding } from './types.ts';
import { META_FRAME, META_TOPIC, MITIGATOR, SIGNALS, type InjectionCategory } from './injection-patterns.ts';
import { disguisedWindows, normalizeWindow } from './normalize.ts';
import { combine, dedupeHits, SignalSet, type Hit as SignalHit } from './signals.ts';
import { dedupeOverlaps } from './spans.ts';

type Hit = SignalHit<InjectionCategory>;

const EVIDENCE_WINDOW = 300;
/** Weight added to evidence found only after undoing a disguise: hiding is itself a tell. */
const DISGUISE_WEIGHT = 0.3;
const ENGINE = new SignalSet(SIGNALS, 250, EVIDENCE_WINDOW);

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
  for (let i = end; i < Math.min(text.length, end + 120) && text[i] !== '\n'; i++)
    if (isQuote(i)) return true;
  return false;
}

/**
 * A chat-template token or tag named as such ("the [INST] and [/INST] tokens", "close the
 * </user> tag") is being talked about, not used.
 */
const MARKUP_TALK =
  /^[^\n]{0,60}?\b(?:tokens?|tags?|elements?|markers?|delimiters?|templates?|format(?:s|ting)?|syntax|attributes?|nodes?)\b/i;

function score(hits: Hit[], target: Hit, text: string): number {
  let p = combine(hits, target, EVIDENCE_WINDOW, () => true);
  if (MITIGATOR.test(text.slice(target.end, target.end + 60))) p *= 0.4;
  if (target.category === 'delimiter_injection' && MARKUP_TALK.test(text.slice(target.end, target.end + 80)))
    p *= 0.5;
  const context = text.slice(Math.max(0, target.start - EVIDENCE_WINDOW), target.end + EVIDENCE_WINDOW);
  if (META_TOPIC.test(context)) p *= quoted(text, target.start, target.end) ? 0.35 : 0.75;
  else if (META_FRAME.test(context) && quoted(text, target.start, target.end)) p *= 0.35;
  return Math.min(0.99, p);
}

function toFindings(hits: Hit[], text: string): Finding[] {
  const findings: Finding[] = [];
  for (const h of hits) {
    if (h.category === 'booster') continue;
    findings.push({
      guardrail: 'prompt-injection',
      category: h.category,
      score: score(hits, h, text),
      start: h.start,
      end: h.end,
    });
  }
  return findings;
}

/** Evidence in normalised copies of disguised stretches, mapped back to original offsets. */
function disguisedEvidence(text: string): Hit[] {
  const hits: Hit[] = [];
  for (const [from, to] of disguisedWindows(text)) {
    const n = normalizeWindow(text, from, to);
    if (n.text === text.slice(from, to)) continue;
    const found = ENGINE.evidence(n.text);
    if (found.length === 0) continue;
    for (const h of found) {
      const start = n.map[h.start] ?? from;
      const end = (n.map[Math.max(h.start, h.end - 1)] ?? start) + 1;
      hits.push({ ...h, start, end });
    }
    const first = found[0];
    if (first)
      hits.push({
        category: 'booster',
        weight: DISGUISE_WEIGHT,
        source: 'disguise',
        start: n.map[first.start] ?? from,
        end: n.map[first.start] ?? from,
      });
  }
  return hits;
}

const MIN_BASE64 = 24;
const BASE64_CHARS = new Uint8Array(128);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-=')
  BASE64_CHARS[c.charCodeAt(0)] = 1;
const isBase64Code = (c: number): boolean => c < 128 && BASE64_CHARS[c] === 1;

/**
 * Runs of at least MIN_BASE64 base64 characters. Any such run covers one of every
 * MIN_BASE64-th offsets, so only those offsets are probed and expanded: a fraction of the
 * cost of a regex that must try every position of ordinary prose.
 */
function base64Runs(text: string): Array<[number, number]> {
  const runs: Array<[number, number]> = [];
  for (let p = MIN_BASE64 - 1; p < text.length; p += MIN_BASE64) {
    if (!isBase64Code(text.charCodeAt(p))) continue;
    let start = p;
    while (start > 0 && isBase64Code(text.charCodeAt(start - 1))) start--;
    let end = p + 1;
    while (end < text.length && isBase64Code(text.charCodeAt(end))) end++;
    if (end - start >= MIN_BASE64) runs.push([start, end]);
    p = end - 1;
  }
  return runs;
}

/** Base64 payloads that decode to readable text are scanned as the text they hide. */
function base64Findings(text: string, depth: number): Finding[] {
  const out: Finding[] = [];
  for (const [start, end] of base64Runs(text)) {
    const run = text.slice(start, end);
    if (!/[a-z]/.test(run) || !/[A-Z]/.test(run)) continue;
    const decoded = Buffer.from(run.replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('utf8');
    if (!readable(decoded)) continue;
    const inner = detectDepth(decoded, depth + 1);
    const top = inner.reduce<Finding | undefined>((a, f) => (a && a.score >= f.score ? a : f), undefined);
    if (!top) continue;
    out.push({ ...top, score: Math.min(0.99, top.score + 0.1), start, end });
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
  const hits = ENGINE.evidence(text);
  const disguised = disguisedEvidence(text);
  const all = disguised.length > 0 ? dedupeHits([...hits, ...disguised]) : hits;
  const findings = toFindings(all, text);
  if (depth < 2) findings.push(...base64Findings(text, depth));
  return dedupeOverlaps(findings);
}

export function detect(text: string): Finding[] {
  return detectDepth(text, 0);
}
