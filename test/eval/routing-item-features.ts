/**
 * Item-difficulty features of a prompt, aimed at why one item is harder than another rather than
 * at which domain it comes from (issue 13; frozen in test/data/routing/outcomes/UNSEEN.md before
 * any figure was computed): how confusable its answer options are, how rare its words are, and
 * the form of its question. No model call: the option and stem vectors are the static MiniLM
 * embedding (routing-static-embedding.ts), word rarity is how WordPiece cuts a word.
 *
 * Evaluation code: serving does not call it unless an outcome model over it ships.
 */
import { minilmDir } from '../../dataplane/src/pipeline/cache/minilm-embedder.ts';
import { minilmWords } from '../../dataplane/src/pipeline/cache/minilm-words.ts';
import { parseOptions } from './routing-options.ts';
import { STATIC_DIMENSIONS, staticEmbedding, wordPieces } from './routing-static-embedding.ts';

export const ITEM_FEATURE_NAMES = [
  'hasOptions',
  'logOptionCount',
  'optionMaxPairCos',
  'optionMeanPairCos',
  'stemBestOptionCos',
  'stemOptionGap',
  'splitWordShare',
  'logSplitWords',
  'maxPieces',
  'midCapitalShare',
  'askNegation',
  'askHypothetical',
  'askPresupposition',
  'askComparison',
  'logTokens',
] as const;

/** Characters read for rarity: the same head the embedding reads. */
const HEAD_CHARS = 2000;

const NEGATION = /\b(?:not|no|never|none|except|least|false|incorrect|cannot)\b|n't\b/i;
const HYPOTHETICAL = /\b(?:if|would|suppose|imagine|assume)\b/i;
const PRESUPPOSITION = /\b(?:why|when|how)\s+(?:did|does|do|was|were|is)\b/i;
const COMPARISON =
  /\b(?:more|less|fewer)\s+than\b|\b\w+er\s+than\b|\b(?:larger|smaller|greater|bigger|compared|better|worse|most|least)\b/i;

/**
 * The ask: the last sentence of the stem that ends in "?", else the stem's last 200
 * characters (an instruction without a question mark usually ends with what it wants).
 */
export function askOf(stem: string): string {
  const q = stem.lastIndexOf('?');
  if (q < 0) return stem.slice(-200);
  const before = stem.slice(0, q);
  const start = Math.max(before.lastIndexOf('. '), before.lastIndexOf('\n'), before.lastIndexOf('! '));
  return stem.slice(start + 1, q + 1);
}

/** A copy of the static embedding of `text` (the embedder reuses its buffer). */
const embed = (text: string): Float32Array => Float32Array.from(staticEmbedding(text).vector);
const cosine = (a: Float32Array, b: Float32Array): number => {
  let s = 0;
  for (let j = 0; j < STATIC_DIMENSIONS; j++) s += (a[j] as number) * (b[j] as number);
  return s;
};

function optionFeatures(stem: string, options: string[]): number[] {
  if (options.length < 2) return [0, 0, 0, 0, 0, 0];
  const stemVec = embed(stem);
  const vecs = options.map(embed);
  let maxPair = -1;
  let sumPair = 0;
  let pairs = 0;
  for (let i = 0; i < vecs.length; i++)
    for (let j = i + 1; j < vecs.length; j++) {
      const c = cosine(vecs[i] as Float32Array, vecs[j] as Float32Array);
      maxPair = Math.max(maxPair, c);
      sumPair += c;
      pairs++;
    }
  const toStem = vecs.map((v) => cosine(stemVec, v)).sort((a, b) => b - a);
  const best = toStem[0] as number;
  return [1, Math.log1p(options.length), maxPair, sumPair / pairs, best, best - (toStem[1] as number)];
}

const pieceScratch: number[] = [];

/** Rare words and entities: WordPiece cuts what it rarely saw; names are capitalised mid-sentence. */
function rarityFeatures(text: string): number[] {
  const { vocab } = minilmWords(minilmDir());
  const head = text.length > HEAD_CHARS ? text.slice(0, HEAD_CHARS) : text;
  let words = 0;
  let split = 0;
  let maxPieces = 0;
  let midCaps = 0;
  let sentenceStart = true;
  for (const m of head.matchAll(/[A-Za-z]+|[.!?:\n]/g)) {
    const w = m[0];
    if (!/[A-Za-z]/.test(w)) {
      sentenceStart = true;
      continue;
    }
    words++;
    if (!sentenceStart && /^[A-Z][a-z]/.test(w)) midCaps++;
    sentenceStart = false;
    // An unknown word is [UNK]: rarer than any split, counted as its letters' worth of pieces.
    const n = wordPieces(vocab, w.toLowerCase(), pieceScratch) ? pieceScratch.length : Math.min(w.length, 8);
    if (n >= 2) split++;
    maxPieces = Math.max(maxPieces, Math.min(n, 8));
  }
  return words ? [split / words, Math.log1p(split), maxPieces, midCaps / words] : [0, 0, 0, 0];
}

/** The features in ITEM_FEATURE_NAMES order. */
export function itemFeatures(text: string): number[] {
  const { stem, options } = parseOptions(text);
  const ask = askOf(stem);
  const flag = (re: RegExp): number => (re.test(ask) ? 1 : 0);
  return [
    ...optionFeatures(stem, options),
    ...rarityFeatures(text),
    flag(NEGATION),
    flag(HYPOTHETICAL),
    flag(PRESUPPOSITION),
    flag(COMPARISON),
    Math.log1p(staticEmbedding(text).tokens),
  ];
}
