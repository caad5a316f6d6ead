/**
 * The offline embedder: deterministic, no download, a few microseconds per short text.
 * Feature hashing (signed, so unrelated texts sit near cosine 0) of
 *   - words (stop words weigh little: "what is the" says nothing about the topic),
 *   - word bigrams (word order: "dog bites man" is not "man bites dog"),
 *   - character trigrams of content words (inflections and typos still overlap),
 * into a fixed number of dimensions, then L2-normalised. It scores paraphrases that share
 * words high and texts about different things low; it does not know synonyms — a model
 * embedder does (CachePolicy `embeddingModel`).
 */
import type { Embedder } from './embedder.ts';

export const BUILTIN_DIMENSIONS = 384;
/** Bump when the features change: old vectors then live in other partitions. */
const VERSION = 1;

const WORD_WEIGHT = 1;
const STOP_WORD_WEIGHT = 0.2;
const BIGRAM_WEIGHT = 0.5;
const STOP_BIGRAM_WEIGHT = 0.1;
const TRIGRAM_WEIGHT = 0.3;

// prettier-ignore
const STOP_WORDS = new Set([
  'a', 'an', 'the', 'and', 'or', 'but', 'if', 'then', 'so', 'of', 'in', 'on', 'at', 'to', 'for',
  'from', 'by', 'with', 'about', 'as', 'into', 'over', 'is', 'are', 'was', 'were', 'be', 'been',
  'being', 'am', 'do', 'does', 'did', 'have', 'has', 'had', 'i', 'me', 'my', 'you', 'your', 'we',
  'our', 'us', 'it', 'its', 'this', 'that', 'these', 'those', 'there', 'here', 'what', 'which',
  'who', 'whom', 'whose', 'how', 'why', 'when', 'where', 'can', 'could', 'would', 'should', 'will',
  'shall', 'may', 'might', 'must', 'please', 'tell', 'give', 'show', 'explain', 'let', 'some',
  'any', 'all', 'just', 'also', 'very', 's', 't', 'd', 'll', 're', 've', 'm', 'he', 'she', 'they',
  'them', 'his', 'her', 'their', 'not', 'no', 'than', 'too', 'up', 'out',
]);

const WORD_RE = /[\p{L}\p{N}]+/gu;
const ASCII_RE = /^[\x00-\x7f]*$/;

/** murmur3's finaliser: spreads every input bit over the whole word. */
function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** FNV-1a over UTF-16 code units, then mixed. */
function hashWord(w: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < w.length; i++) h = Math.imul(h ^ w.charCodeAt(i), 0x01000193);
  return fmix(h);
}

const hashPair = (a: number, b: number): number => fmix((Math.imul(a, 0x9e3779b1) ^ b) + 0x7f4a7c15);
const hashTrigram = (a: number, b: number, c: number): number =>
  fmix(Math.imul(Math.imul(a + 0x1b873593, 0x01000193) ^ b, 0x01000193) ^ c ^ 0x68e31da4);

function add(v: Float32Array, h: number, weight: number): void {
  const i = (h >>> 1) % v.length;
  v[i] = (v[i] as number) + (h & 1 ? -weight : weight);
}

const BOUNDARY = 0x2;

/** One text → one unit vector of `dimensions` floats. Text without letters or digits maps to one fixed vector. */
export function builtinEmbed(text: string, dimensions = BUILTIN_DIMENSIONS): Float32Array {
  const v = new Float32Array(dimensions);
  const lower = (ASCII_RE.test(text) ? text : text.normalize('NFKC')).toLowerCase();
  let prev = 0;
  let prevStop = true;
  let words = 0;
  for (const match of lower.matchAll(WORD_RE)) {
    const w = match[0];
    const stop = STOP_WORDS.has(w);
    const h = hashWord(w);
    add(v, h, stop ? STOP_WORD_WEIGHT : WORD_WEIGHT);
    if (words > 0) add(v, hashPair(prev, h), stop && prevStop ? STOP_BIGRAM_WEIGHT : BIGRAM_WEIGHT);
    if (!stop) {
      // Trigrams of "\u0002word\u0002": the boundaries make prefixes and suffixes count.
      let a = BOUNDARY;
      let b = w.charCodeAt(0);
      for (let i = 1; i <= w.length; i++) {
        const c = i < w.length ? w.charCodeAt(i) : BOUNDARY;
        add(v, hashTrigram(a, b, c), TRIGRAM_WEIGHT);
        a = b;
        b = c;
      }
    }
    prev = h;
    prevStop = stop;
    words++;
  }
  let sum = 0;
  for (let i = 0; i < dimensions; i++) sum += (v[i] as number) * (v[i] as number);
  if (sum === 0) {
    // No features (empty, punctuation only): all such texts are the same "nothing".
    v[0] = 1;
    return v;
  }
  const inv = 1 / Math.sqrt(sum);
  for (let i = 0; i < dimensions; i++) v[i] = (v[i] as number) * inv;
  return v;
}

export function createBuiltinEmbedder(dimensions = BUILTIN_DIMENSIONS): Embedder {
  if (!Number.isInteger(dimensions) || dimensions < 16)
    throw new RangeError('builtin embedder needs >= 16 dimensions');
  return {
    id: `builtin-v${VERSION}-${dimensions}`,
    dimensions,
    embed: async (texts) => texts.map((t) => builtinEmbed(t, dimensions)),
  };
}
