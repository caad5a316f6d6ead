/**
 * The signal sets of the prompt-injection and toxicity detectors, and the one anchor pass
 * they share on a text both read (TextPrep.anchors): the two sets' word anchors are found
 * by a single regex pass over one lower-cased copy instead of one each.
 */
import { SIGNALS as INJECTION_SIGNALS } from './injection-patterns.ts';
import { AnchorUnion, SignalSet, type FoundAnchors } from './signals.ts';
import { SIGNALS as TOXICITY_SIGNALS } from './toxicity-lexicon.ts';

/** Evidence within this many characters of a hit combines (injection.ts). */
export const INJECTION_EVIDENCE_WINDOW = 300;
export const INJECTION_ENGINE = new SignalSet(INJECTION_SIGNALS, 250, INJECTION_EVIDENCE_WINDOW);
export const TOXICITY_ENGINE = new SignalSet(TOXICITY_SIGNALS, 200, 200);

const UNION = new AnchorUnion([INJECTION_ENGINE, TOXICITY_ENGINE]);

export interface SharedAnchors {
  injection: FoundAnchors;
  toxicity: FoundAnchors;
}

/** `lower`: a text, lower-cased. */
export function findAnchors(lower: string): SharedAnchors {
  const [injection, toxicity] = UNION.find(lower);
  return {
    injection: { lower, words: injection ?? { at: [], token: [] } },
    toxicity: { lower, words: toxicity ?? { at: [], token: [] } },
  };
}
