/**
 * Hashed word and character n-gram features of a text, scored against both learned models
 * in the same pass. The specification (token rule, hashes, windows) is
 * scripts/guards/features.py, which trained the weights; the two must agree index for
 * index, and learned.test.ts checks them on the texts the trainer scored for parity.
 *
 * One pass over the text: each token's features are hashed once and looked up in the
 * interleaved weight table (injection and toxicity side by side), giving per-token sums;
 * window sums then come from prefix sums, so overlapping windows cost nothing extra.
 */

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
const SEED_WORD = 1;
const SEED_GRAM = 2;

export interface FeatureSpec {
  dimBits: number;
  window: number;
  stride: number;
  maxGramChars: number;
}

/** Code points >= 128 that separate words: punctuation, symbols, emoji. */
function isSeparator(cp: number): boolean {
  return (
    cp <= 0xbf ||
    cp === 0xd7 ||
    cp === 0xf7 ||
    (cp >= 0x2000 && cp <= 0x2bff) ||
    (cp >= 0x3000 && cp <= 0x303f) ||
    (cp >= 0xfe30 && cp <= 0xfe4f) ||
    (cp >= 0xff00 && cp <= 0xff0f) ||
    (cp >= 0xff1a && cp <= 0xff20) ||
    (cp >= 0x1f000 && cp <= 0x1faff)
  );
}

function isWordCode(cp: number): boolean {
  if (cp < 128) return (cp >= 48 && cp <= 57) || (cp >= 97 && cp <= 122) || (cp >= 65 && cp <= 90);
  return !isSeparator(cp);
}

function codePointAt(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c >= 0xd800 && c < 0xdc00 && i + 1 < text.length) {
    const d = text.charCodeAt(i + 1);
    if (d >= 0xdc00 && d < 0xe000) return ((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000;
  }
  return c;
}

/** Per-token sums of both models' weights and feature counts, with token offsets. */
export interface TokenSums {
  count: number;
  /** UTF-16 start and end (exclusive) of each token. */
  starts: Int32Array;
  ends: Int32Array;
  /** Per token: sum of int8 weights for model 0 and model 1, and its number of features. */
  sum0: Int32Array;
  sum1: Int32Array;
  n: Int32Array;
}

export class FeatureScorer {
  private readonly mask: number;
  private readonly cps = new Int32Array(4096);

  constructor(
    private readonly spec: FeatureSpec,
    /** Interleaved int8 weights: [model0[0], model1[0], model0[1], model1[1], ...]. */
    private readonly weights: Int8Array,
  ) {
    this.mask = (1 << spec.dimBits) - 1;
    if (weights.length !== 2 << spec.dimBits)
      throw new Error(`learned guard weights: expected ${2 << spec.dimBits} values, got ${weights.length}`);
  }

  tokenSums(text: string): TokenSums {
    // A token has at least one code unit and one separator after it, so this bounds the count.
    const cap = (text.length >> 1) + 1;
    const out: TokenSums = {
      count: 0,
      starts: new Int32Array(cap),
      ends: new Int32Array(cap),
      sum0: new Int32Array(cap),
      sum1: new Int32Array(cap),
      n: new Int32Array(cap),
    };
    let prev = -1;
    let i = 0;
    const len = text.length;
    while (i < len) {
      let cp = codePointAt(text, i);
      if (!isWordCode(cp)) {
        i += cp > 0xffff ? 2 : 1;
        continue;
      }
      const start = i;
      let ascii = true;
      while (i < len) {
        cp = codePointAt(text, i);
        if (!isWordCode(cp)) break;
        if (cp >= 128) ascii = false;
        i += cp > 0xffff ? 2 : 1;
      }
      prev = this.token(text, start, i, ascii, prev, out);
    }
    return out;
  }

  /** Hashes one token's features into `out`; returns its word hash for the next bigram. */
  private token(text: string, start: number, end: number, ascii: boolean, prev: number, out: TokenSums): number {
    const cps = this.cps;
    let len = 0;
    if (ascii) {
      for (let k = start; k < end && len < cps.length; k++) {
        const c = text.charCodeAt(k);
        cps[len++] = c >= 65 && c <= 90 ? c | 0x20 : c;
      }
    } else {
      const lower = text.slice(start, end).toLowerCase();
      for (let k = 0; k < lower.length && len < cps.length; ) {
        const cp = codePointAt(lower, k);
        cps[len++] = cp;
        k += cp > 0xffff ? 2 : 1;
      }
    }
    const w = this.weights;
    const mask = this.mask;
    let s0 = 0;
    let s1 = 0;
    let n = 0;
    let h = (FNV_OFFSET ^ SEED_WORD) >>> 0;
    for (let k = 0; k < len; k++) h = Math.imul(h ^ (cps[k] as number), FNV_PRIME);
    h >>>= 0;
    let idx = (h & mask) << 1;
    s0 += w[idx] as number;
    s1 += w[idx + 1] as number;
    n++;
    if (prev >= 0) {
      let b = Math.imul((prev ^ 0x9e3779b9) >>> 0, FNV_PRIME);
      b = Math.imul((b ^ h) >>> 0, FNV_PRIME) >>> 0;
      idx = (b & mask) << 1;
      s0 += w[idx] as number;
      s1 += w[idx + 1] as number;
      n++;
    }
    // Character 4-grams of \x02 token \x03 over the token's first maxGramChars code points.
    const g = Math.min(len, this.spec.maxGramChars);
    const padded = g + 2;
    const at = (j: number): number => (j === 0 ? 2 : j === padded - 1 ? 3 : (cps[j - 1] as number));
    const grams = padded <= 4 ? 1 : padded - 3;
    for (let j = 0; j < grams; j++) {
      let x = (FNV_OFFSET ^ SEED_GRAM) >>> 0;
      const stop = padded <= 4 ? padded : j + 4;
      for (let k = j; k < stop; k++) x = Math.imul(x ^ at(k), FNV_PRIME);
      idx = ((x >>> 0) & mask) << 1;
      s0 += w[idx] as number;
      s1 += w[idx + 1] as number;
      n++;
    }
    const t = out.count++;
    out.starts[t] = start;
    out.ends[t] = end;
    out.sum0[t] = s0;
    out.sum1[t] = s1;
    out.n[t] = n;
    return h;
  }
}

/** Window [from, to) of tokens. */
export type Window = [number, number];

/** The windows the trainer scored: WINDOW tokens every STRIDE, the last ending at the end. */
export function windows(count: number, spec: FeatureSpec): Window[] {
  if (count <= spec.window) return [[0, count]];
  const out: Window[] = [];
  for (let a = 0; a < count - spec.window; a += spec.stride) out.push([a, a + spec.window]);
  out.push([count - spec.window, count]);
  return out;
}
