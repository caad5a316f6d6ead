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
  'reasoning_cues',
  'quantity_cues',
  'code_cues',
  'writing_cues',
  'format_demands',
  'advice_cues',
  'digit_share',
  'operator_share',
  'log_sentences',
] as const;

/*
 * Cues meant to carry across domains (a subject's vocabulary does not): what kind of work
 * the ask is (reasoning, counting, code, free writing, advice) and how tightly its answer is
 * constrained. Each is a count of distinct matches, so a cue repeated says nothing more.
 */
const REASONING =
  /\b(?:step[- ]by[- ]step|reason(?:ing)?|explain why|justify|prove|deduce|infer|logic(?:al)?|puzzle|riddle|paradox|contradict\w*|assum\w+|therefore|implies|true or false|which of the following)\b/g;
const QUANTITY =
  /\b(?:how (?:many|much|long|far|old)|calculate|compute|solve|probability|percent(?:age)?|average|total|sum|ratio|rate|speed|distance|equation|expected|minimum|maximum|optimal|integer|fraction|area|volume|cost)\b/g;
const CODE =
  /\b(?:code|function|program|script|python|javascript|typescript|java|c\+\+|sql|regex|algorithm|implement|debug|compile|api|class|method|array|string|loop|recursion|complexity)\b/g;
const WRITING =
  /\b(?:story|poem|essay|blog|email|letter|song|lyrics|slogan|tweet|speech|imagine|pretend|role-?play|act as|character|dialogue|persuasive|creative|catchy|title|describe|rewrite|rephrase)\b/g;
const FORMAT =
  /\b(?:json|yaml|csv|table|bullet(?: points?)?|markdown|exactly|in \d+ words|no more than|at least|at most|only output|without using|must not|do not use|don't use|rhyme|acrostic|format|concise|one sentence|each)\b/g;
const ADVICE =
  /\b(?:what do you think|recommend\w*|advice|advise|suggest\w*|tips|ideas|opinion|best way|should i|help me)\b/g;
const DIGIT = /\d/g;
const OPERATOR = /[=+*/^<>%√∑∫]|(?<=\d\s?)-(?=\s?\d)/g;
const SENTENCE_END = /[.!?。！？](?:\s|$)/g;

function distinct(re: RegExp, text: string): number {
  const found = text.match(re);
  return found ? new Set(found).size : 0;
}

export function denseFeatures(f: DifficultyFeatures, text: string): number[] {
  const hard =
    f.proof.length +
    f.derive.length +
    f.analysis.length +
    f.design.length +
    f.systems.length +
    f.engineering.length;
  const head = (text.length > HASH_CHARS ? text.slice(0, HASH_CHARS) : text).toLowerCase();
  const chars = Math.max(head.length, 1);
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
    Math.min(distinct(REASONING, head), 3) / 3,
    Math.min(distinct(QUANTITY, head), 3) / 3,
    Math.min(distinct(CODE, head), 3) / 3,
    Math.min(distinct(WRITING, head), 3) / 3,
    Math.min(distinct(FORMAT, head), 3) / 3,
    Math.min(distinct(ADVICE, head), 2) / 2,
    Math.min((head.match(DIGIT)?.length ?? 0) / chars, 0.2) * 5,
    Math.min((head.match(OPERATOR)?.length ?? 0) / chars, 0.05) * 20,
    Math.log1p(head.match(SENTENCE_END)?.length ?? 0) / 3,
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
