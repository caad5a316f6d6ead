/**
 * The inputs of the outcome model (outcome.ts): a few numbers from the rule features plus
 * hashed word unigrams and bigrams of the last user turn's start. Shared by the serving path
 * and scripts/train-routing.ts so both see exactly the same vector.
 */
import type { DifficultyFeatures } from './features.ts';

/** Hashed n-gram buckets (a power of two). */
export const HASH_BUCKETS = 4096;
/** Only the start of the turn is hashed: the ask is there, and the cost stays flat. */
const HASH_CHARS = 1500;

/** Dense features, in a fixed order (the weights file names them). */
export const DENSE_NAMES = [
  'log_words',
  'log_instruction_words',
  'hard_terms',
  'math_terms',
  'math_notation',
  'numbers',
  'questions',
  'list_items',
  'code_blocks',
  'lookup',
  'task_verbs',
  'constraints',
] as const;

export function denseFeatures(f: DifficultyFeatures): number[] {
  const hard =
    f.proof.length +
    f.derive.length +
    f.analysis.length +
    f.design.length +
    f.systems.length +
    f.engineering.length;
  return [
    Math.log1p(f.words) / 5,
    Math.log1p(f.instructionWords) / 5,
    Math.min(hard, 5) / 5,
    Math.min(f.math.length, 5) / 5,
    f.mathNotation ? 1 : 0,
    Math.min(f.numbers, 10) / 10,
    Math.min(f.questions, 5) / 5,
    Math.min(f.listItems, 10) / 10,
    Math.min(f.codeBlocks, 3) / 3,
    f.lookup ? 1 : 0,
    Math.min(f.task.length, 5) / 5,
    Math.min(f.constraints.length, 5) / 5,
  ];
}

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
const SPACE = 32;
// Marks of buckets already taken for the current text (a stamp per call, no clearing).
const seen = new Uint32Array(HASH_BUCKETS);
let stamp = 0;

/**
 * Distinct buckets of the turn's unigrams and bigrams (words: runs of ASCII letters and
 * digits, lower-cased). FNV-1a over the characters, stable across runtimes; a bigram's hash
 * continues the previous word's with a space and the word, so no strings are built (the
 * classifier runs on every request and must not feed the garbage collector).
 */
export function hashedBuckets(text: string): number[] {
  stamp = (stamp + 1) >>> 0;
  if (stamp === 0) {
    seen.fill(0);
    stamp = 1;
  }
  const out: number[] = [];
  const take = (h: number): void => {
    const b = (h >>> 0) & (HASH_BUCKETS - 1);
    if (seen[b] !== stamp) {
      seen[b] = stamp;
      out.push(b);
    }
  };
  const end = Math.min(text.length, HASH_CHARS);
  let uni = FNV_OFFSET;
  let bi = 0;
  let inWord = false;
  let hasPrev = false;
  for (let i = 0; i <= end; i++) {
    let c = i < end ? text.charCodeAt(i) : 0;
    if (c >= 65 && c <= 90) c += 32;
    const wordChar = (c >= 97 && c <= 122) || (c >= 48 && c <= 57);
    if (wordChar) {
      if (!inWord) {
        // Bigram: the previous word's hash (kept in `uni`), then a space, then this word.
        bi = hasPrev ? Math.imul(uni ^ SPACE, FNV_PRIME) : 0;
        uni = FNV_OFFSET;
        inWord = true;
      }
      uni = Math.imul(uni ^ c, FNV_PRIME);
      if (hasPrev) bi = Math.imul(bi ^ c, FNV_PRIME);
    } else if (inWord) {
      take(uni);
      if (hasPrev) take(bi);
      hasPrev = true;
      inWord = false;
    }
  }
  return out;
}
