/**
 * Shapes shared by the four detectors and the request scanner. A Finding carries offsets
 * rather than the matched text, so nothing that leaves a detector can leak the content;
 * only redaction reads the spans back out of the original string.
 */
import type { SharedAnchors } from './engines.ts';
import type { LearnedScores } from './learned/model.ts';

export const GuardrailNames = ['prompt-injection', 'toxicity', 'pii', 'secrets'] as const;
export type GuardrailName = (typeof GuardrailNames)[number];

export interface Finding {
  guardrail: GuardrailName;
  /** Snake-case category for prompt-injection and toxicity, entity kind for pii and secrets. */
  category: string;
  /** Confidence in 0..1; compared with the policy threshold. */
  score: number;
  /** UTF-16 offsets into the scanned text, end exclusive. */
  start: number;
  end: number;
}

/**
 * Work on a text that more than one detector needs (where its disguises are), done at most
 * once when the scanner hands the same object to each detector. A detector called alone
 * does the work itself.
 */
export interface TextPrep {
  disguised(): Array<[number, number]>;
  /** Scores of the learned injection and toxicity models (one feature pass for both). */
  learned(): LearnedScores;
  /** text.toLowerCase(), which several detectors match on. */
  lower(): string;
  /** Lower-cased text and the word anchors of the injection and toxicity signal sets. */
  anchors(): SharedAnchors;
  /**
   * Spans of the words that contain a credential word (word-notes.ts), when the learned
   * layer has read this ASCII text already (learned() or anchors() called); else undefined.
   */
  credentialWords(): Array<[number, number]> | undefined;
  /** Likewise, spans of the words where a gitleaks keyword can begin (word-notes.ts). */
  keywordWords(): Array<[number, number]> | undefined;
}

export type Detector = (text: string, prep?: TextPrep) => Finding[];
