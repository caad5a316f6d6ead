/**
 * Prompt-injection detector. One pass over the lower-cased text finds anchor words; each
 * signal whose anchor occurs runs in a window around it; weak cues and boosters run only
 * around what fired; evidence within a window combines by noisy-OR. Disguised stretches
 * (zero-width, homoglyphs, spacing, leetspeak) are normalised and scanned again, and
 * base64 runs that decode to text are decoded and scanned. Damped: quoted phrases inside
 * talk *about* injection (training material, questions), instructions that belong to a
 * document or to someone else ("in the README", "my manager told me to"), and template
 * tokens or tags named as such or nested in data markup.
 */
import type { Finding, TextPrep } from './types.ts';
import {
  META_FRAME,
  META_TOPIC,
  MITIGATOR,
  REPORTED_ORDER,
  SEGMENT_WORDS,
  type InjectionCategory,
} from './injection-patterns.ts';
import { normalizeWindow, prepare, wordSegmenter } from './normalize.ts';
import { INJECTION_ENGINE, INJECTION_EVIDENCE_WINDOW } from './engines.ts';
import { combine, dedupeHits, NearHits, type Hit as SignalHit } from './signals.ts';
import { dedupeOverlaps, insideQuotes } from './spans.ts';
import { learnedFinding, REPORT_FLOOR, withMargin } from './learned/verdict.ts';
import { MayMatch } from './may-match.ts';
import {
  notOwnPrompt,
  ordinaryTarget,
  promptSetup,
  quotedMention,
  learnedMargin,
} from './injection-structure.ts';

type Hit = SignalHit<InjectionCategory>;

const EVIDENCE_WINDOW = INJECTION_EVIDENCE_WINDOW;
/** Weight added to evidence found only after undoing a disguise: hiding is itself a tell. */
const DISGUISE_WEIGHT = 0.3;
const ENGINE = INJECTION_ENGINE;
const WORDS = wordSegmenter(SEGMENT_WORDS);

/**
 * A chat-template token or tag named as such ("the [INST] and [/INST] tokens", "close the
 * </user> tag") is being talked about, not used.
 */
const MARKUP_TALK =
  /^[^\n]{0,60}?\b(?:tokens?|tags?|elements?|markers?|delimiters?|templates?|format(?:s|ting)?|syntax|attributes?|nodes?|separat\w*|samples?|tokeniz\w*|vocab\w*|datasets?|training)\b/i;

/**
 * An XML element among other elements ("<system>\n  <name>prod</name>\n</system>") is data
 * markup. A role switch is followed, or preceded when it closes, by prose.
 */
function nestedMarkup(text: string, h: Hit): boolean {
  const tag = text.slice(h.start, h.end);
  if (!/^<\/?[\w-]+>$/.test(tag)) return false;
  if (tag[1] === '/')
    return text
      .slice(Math.max(0, h.start - 40), h.start)
      .trimEnd()
      .endsWith('>');
  const after = text.slice(h.end, h.end + 40).trimStart();
  return after.startsWith('<') && !after.startsWith('</');
}

/** Categories that a prompt set-up's own layout produces (see injection-structure.ts). */
const LAYOUT = new Set<InjectionCategory>(['delimiter_injection', 'indirect_injection']);

/** How far back from a hit scoring reads the hit's line (quoted-mention check). */
const LINE_LOOKBACK = 120;

/**
 * Work done by scoring, for tests: hits scored, and characters searched back for the start
 * of a hit's line. Each hit reads at most LINE_LOOKBACK of them, so on any text the second
 * grows with the first; it used to grow with the hit's offset in a text with no newline
 * (256 Ki characters of "ignore previous instructions N " took ~4.9 s).
 */
export const scoreWork = { hits: 0, lineChars: 0 };

/**
 * A hit's 600-character context is tested for META_TOPIC and META_FRAME only where they may
 * match (may-match.ts): in a text with a hit every few characters, testing every context
 * read each character dozens of times.
 */
/** Every context may match: a text with few hits tests them directly. */
const ALWAYS = { anyIn: (): boolean => true };

export interface MetaGates {
  topic: { anyIn(from: number, to: number): boolean };
  frame: { anyIn(from: number, to: number): boolean };
}

/** The gates for one text with `hits` hits (exported for tests). */
export function metaGates(text: string, hits: number): MetaGates {
  if (hits < 16) return { topic: ALWAYS, frame: ALWAYS };
  return { topic: new MayMatch(META_TOPIC, text), frame: new MayMatch(META_FRAME, text) };
}

function score(
  hits: Hit[],
  near: NearHits<string>,
  target: Hit,
  text: string,
  setup: boolean,
  meta: MetaGates,
): number {
  let p = combine(near, target, EVIDENCE_WINDOW, () => true);
  if (
    target.category === 'instruction_override' &&
    ordinaryTarget(
      text.slice(target.start, target.end),
      text.slice(Math.max(0, target.start - 30), target.start),
      text.slice(target.end, target.end + 60),
    )
  )
    p *= 0.4;
  if (setup && LAYOUT.has(target.category)) p *= 0.5;
  if (
    target.category === 'system_prompt_extraction' &&
    notOwnPrompt(text.slice(target.start, target.end), text.slice(target.end, target.end + 40))
  )
    p *= 0.4;
  // The line's text before the hit, at most 120 characters: the newline is looked for in
  // those only (a search back to the text's start made a long line quadratic).
  const lookback = Math.max(0, target.start - LINE_LOOKBACK);
  const lineStart = text.slice(lookback, target.start).lastIndexOf('\n') + 1 + lookback;
  scoreWork.hits++;
  scoreWork.lineChars += target.start - lookback;
  if (
    quotedMention(
      // A match ending in \S* may swallow the closing mark («...»).
      insideQuotes(text, target.start, target.end) || /["”»]/.test(text.slice(target.start, target.end)),
      text.slice(lineStart, target.start),
    )
  )
    p *= 0.35;
  if (MITIGATOR.test(text.slice(target.end, target.end + 60))) p *= 0.4;
  if (REPORTED_ORDER.test(text.slice(Math.max(0, target.start - 40), target.start))) p *= 0.5;
  if (
    target.category === 'delimiter_injection' &&
    (MARKUP_TALK.test(text.slice(target.end, target.end + 80)) || nestedMarkup(text, target))
  )
    p *= 0.5;
  const from = Math.max(0, target.start - EVIDENCE_WINDOW);
  const to = target.end + EVIDENCE_WINDOW;
  const context = text.slice(from, to);
  if (meta.topic.anyIn(from, to) && META_TOPIC.test(context))
    p *= insideQuotes(text, target.start, target.end) ? 0.35 : 0.75;
  else if (
    meta.frame.anyIn(from, to) &&
    META_FRAME.test(context) &&
    insideQuotes(text, target.start, target.end)
  )
    p *= 0.35;
  return Math.min(0.99, p);
}

function toFindings(hits: Hit[], text: string): Finding[] {
  const findings: Finding[] = [];
  const setup = hits.length > 0 && promptSetup(text);
  const near = new NearHits(hits);
  const meta = metaGates(text, hits.length);
  for (const h of hits) {
    if (h.category === 'booster') continue;
    findings.push({
      guardrail: 'prompt-injection',
      category: h.category,
      score: score(hits, near, h, text, setup, meta),
      start: h.start,
      end: h.end,
    });
  }
  return findings;
}

/** Evidence in normalised copies of disguised stretches, mapped back to original offsets. */
function disguisedEvidence(text: string, prep: TextPrep): Hit[] {
  const hits: Hit[] = [];
  for (const [from, to] of prep.disguised()) {
    const n = normalizeWindow(text, from, to, WORDS);
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

function detectDepth(text: string, depth: number, prep: TextPrep = prepare(text)): Finding[] {
  const hits = ENGINE.evidence(text, prep.anchors().injection);
  const disguised = disguisedEvidence(text, prep);
  const all = disguised.length > 0 ? dedupeHits([...hits, ...disguised]) : hits;
  const findings = toFindings(all, text);
  if (depth < 2) findings.push(...base64Findings(text, depth));
  return dedupeOverlaps(findings);
}

export function detect(text: string, prep: TextPrep = prepare(text)): Finding[] {
  const findings = detectDepth(text, 0, prep);
  const learned = prep.learned().injection;
  // Only a score that could reach the report floor needs the structure check.
  const judged =
    learned.score >= REPORT_FLOOR
      ? withMargin(learned, learnedMargin(promptSetup(text), learned.tokens))
      : learned;
  findings.push(...learnedFinding('prompt-injection', judged));
  return findings;
}
