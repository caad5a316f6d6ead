/**
 * The signal sets of the prompt-injection and toxicity detectors, and the one anchor pass
 * they share on a text both read (TextPrep.anchors): the two sets' word anchors are found
 * by a single regex pass over one lower-cased copy instead of one each.
 */
import { SIGNALS as INJECTION_SIGNALS } from './injection-patterns.ts';
import type { WordNotes } from './learned/features.ts';
import { AnchorUnion, SignalSet, type FoundAnchors, type WordAnchors } from './signals.ts';
import { SIGNALS as TOXICITY_SIGNALS } from './toxicity-lexicon.ts';

/** Evidence within this many characters of a hit combines (injection.ts). */
export const INJECTION_EVIDENCE_WINDOW = 300;
export const INJECTION_ENGINE = new SignalSet(INJECTION_SIGNALS, 250, INJECTION_EVIDENCE_WINDOW);
export const TOXICITY_ENGINE = new SignalSet(TOXICITY_SIGNALS, 200, 200);

/** The word anchors of both sets, found together (also from word notes: word-notes.ts). */
export const ANCHOR_UNION = new AnchorUnion([INJECTION_ENGINE, TOXICITY_ENGINE]);
const UNION = ANCHOR_UNION;

export interface SharedAnchors {
  injection: FoundAnchors;
  toxicity: FoundAnchors;
}

/** `lower`: a text, lower-cased. */
export function findAnchors(lower: string): SharedAnchors {
  return shared(lower, UNION.find(lower));
}

/**
 * findAnchors for an ASCII text from the notes its tokenizer pass took (word-notes.ts):
 * `starts`, `ends` of its tokens, `mask` the anchor part of a note; the caller checks
 * NOTES_FIND_ANCHORS.
 */
export function findNotedAnchors(
  lower: string,
  starts: Int32Array,
  ends: Int32Array,
  notes: WordNotes,
  mask: number,
): SharedAnchors {
  return shared(lower, UNION.findNoted(lower, starts, ends, notes.tokens, notes.values, notes.count, mask));
}

function shared(lower: string, [injection, toxicity]: WordAnchors[]): SharedAnchors {
  return {
    injection: { lower, words: injection ?? { at: [], token: [] } },
    toxicity: { lower, words: toxicity ?? { at: [], token: [] } },
  };
}
