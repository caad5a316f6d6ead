/**
 * Toxicity detector: insults, threats, hate, sexual content and self-harm, from our own
 * lexicon and phrase patterns on the shared signal engine (signals.ts).
 *
 * Why not a profanity library: obscenity (well kept, good at disguised spellings) took
 * ~15 ms on an 80 KB conversation — seven times the budget of all four detectors — and,
 * like the word lists of @2toad/profanity or bad-words, it answers "profane or not", with
 * no categories, and flags ordinary words ("anal", "balls") or profanity that insults no
 * one. Toxicity here is about targets and intent, which word lists cannot see.
 *
 * Decisions: undirected swearing is `profanity` at 0.3 (below the default threshold); a
 * mild word ("stupid") is an insult only when aimed at someone; threats need a person as
 * the object ("kill the process" and "this bug is killing me" are not threats); talk about
 * self-harm in a helping or clinical frame, by accident, or reported ("a user told me to
 * kill myself") is `self_harm` at 0.25, first-person intent, method-seeking or telling
 * someone to do it is 0.85; a quoted, asked-about or reported word ("is 'muppet' rude?",
 * "people say X are ...") is damped. Disguised stretches are normalised and scanned again,
 * as for prompt injection.
 */
import type { Finding, TextPrep } from './types.ts';
import {
  HATE_REPORTED,
  MENTION_BEFORE,
  MENTION_FRAME,
  SEGMENT_WORDS,
  SELF_HARM_ACCIDENT,
  SELF_HARM_HELP,
  SELF_HARM_URGED,
  THING_AFTER,
  type ToxCategory,
} from './toxicity-lexicon.ts';
import { normalizeWindow, prepare, wordSegmenter } from './normalize.ts';
import { TOXICITY_ENGINE } from './engines.ts';
import { combine, NearHits, type FoundAnchors, type Hit } from './signals.ts';
import { dedupeOverlaps, insideQuotes } from './spans.ts';
import { learnedFinding } from './learned/verdict.ts';

const ENGINE = TOXICITY_ENGINE;
const WORDS = wordSegmenter(SEGMENT_WORDS);
/** Categories whose words can be quoted to ask about them ("is 'moron' offensive?"). */
const MENTIONABLE = new Set<ToxCategory>(['insult', 'hate', 'profanity', 'threat']);
const WINDOW = 150;
const REPORTED = new Set<ToxCategory>(['insult', 'threat', 'hate', 'sexual', 'self_harm', 'profanity']);

/** Which neighbours strengthen a hit of each category. */
const RELATED: Record<ToxCategory, ReadonlySet<ToxCategory>> = {
  insult: new Set(['insult', 'profanity']),
  threat: new Set(['threat']),
  hate: new Set(['hate']),
  sexual: new Set(['sexual', 'explicit']),
  self_harm: new Set(['self_harm']),
  profanity: new Set(['profanity']),
  directed: new Set(),
  explicit: new Set(),
};

/** Compounds that share a word with the lexicon and mean something else. */
const BENIGN_AFTER = /^(?:\s+willow|\s+laude|[- ]a[- ]doodle)/i;

/** A directed cue ("you are a", "such a", "shut up") that runs up to or over the hit. */
function directedWeight(near: NearHits<ToxCategory>, h: Hit<ToxCategory>): number {
  let miss = 1;
  for (const d of near.touching(h.start - 2, h.start - 1))
    if (d.category === 'directed' && d.start < h.start && d.end >= h.start - 2) miss *= 1 - d.weight;
  return 1 - miss;
}

function score(
  hits: Hit<ToxCategory>[],
  near: NearHits<ToxCategory>,
  h: Hit<ToxCategory>,
  text: string,
): number {
  const related = RELATED[h.category];
  let miss = 1 - combine(near, h, WINDOW, (o) => related.has(o.category));
  // "What a stupid mistake": the adjective's target is a thing, so "what a" aims at no one.
  if (h.category === 'insult' && !THING_AFTER.test(text.slice(h.end, h.end + 24)))
    miss *= 1 - directedWeight(near, h);
  let p = 1 - miss;
  // Quoted or named as a word ("the word 'retard'"): a mention, not an insult.
  const before = text.slice(Math.max(0, h.start - 30), h.start);
  const quotedWord = /["'“‘]$/.test(before) && /^["'”’]/.test(text.slice(h.end, h.end + 1));
  if (
    (h.category === 'insult' || h.category === 'hate' || h.category === 'profanity') &&
    (quotedWord || MENTION_BEFORE.test(before))
  )
    p *= 0.4;
  // Inside a quoted phrase ("rewrite 'you are an idiot' politely"), or asked about ("is
  // 'Halt die Klappe' rude?"): reported or asked about, not said.
  else if (
    MENTIONABLE.has(h.category) &&
    (insideQuotes(text, h.start, h.end) ||
      MENTION_FRAME.test(text.slice(Math.max(0, h.start - 120), h.end + 120)))
  )
    p *= 0.5;
  if (h.category === 'self_harm') {
    const near = text.slice(Math.max(0, h.start - WINDOW), h.end + WINDOW);
    if (
      (p < 0.85 && SELF_HARM_HELP.test(near)) ||
      SELF_HARM_ACCIDENT.test(near) ||
      SELF_HARM_URGED.test(near)
    )
      p = Math.min(p, 0.25);
  }
  if (h.category === 'hate' && HATE_REPORTED.test(text.slice(Math.max(0, h.start - 60), h.start))) p *= 0.5;
  return Math.min(0.99, p);
}

function detectPlain(text: string, anchors?: FoundAnchors): Finding[] {
  const hits = ENGINE.evidence(text, anchors);
  if (hits.length === 0) return [];
  const near = new NearHits(hits);
  const findings: Finding[] = [];
  for (const hit of hits) {
    if (!REPORTED.has(hit.category) || BENIGN_AFTER.test(text.slice(hit.end, hit.end + 16))) continue;
    let h = hit;
    // "you little shit," — swearing used as a noun for the person addressed is an insult.
    if (
      h.category === 'profanity' &&
      /^\s*(?:[,.!?;]|$)/.test(text.slice(h.end, h.end + 3)) &&
      directedWeight(near, h) > 0
    )
      h = { ...h, category: 'insult' };
    findings.push({
      guardrail: 'toxicity',
      category: h.category,
      score: score(hits, near, h, text),
      start: h.start,
      end: h.end,
    });
  }
  return findings;
}

/**
 * Findings in the text and in normalised copies of its disguised stretches (spaced letters,
 * leetspeak, look-alike letters, invisible characters), mapped back to original offsets.
 */
export function detect(text: string, prep: TextPrep = prepare(text)): Finding[] {
  const findings = detectPlain(text, prep.anchors().toxicity);
  for (const [from, to] of prep.disguised()) {
    const n = normalizeWindow(text, from, to, WORDS);
    if (n.text === text.slice(from, to)) continue;
    for (const f of detectPlain(n.text)) {
      const start = n.map[f.start] ?? from;
      const end = (n.map[Math.max(f.start, f.end - 1)] ?? start) + 1;
      findings.push({ ...f, start, end });
    }
  }
  const out = dedupeOverlaps(findings);
  out.push(...learnedFinding('toxicity', prep.learned().toxicity));
  return out;
}
