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
  smallWindow: number;
  smallStride: number;
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

/**
 * 1 for a lower-case ASCII letter or digit, 2 for an upper-case one, 0 otherwise; 256
 * entries, so that any byte indexes it (0 from 128 on).
 */
const ASCII_CLASS = new Uint8Array(256);
/** 0x20 for A-Z: OR-ing it in lower-cases an ASCII byte. */
const LOWER_BIT = new Uint8Array(256);
for (let c = 65; c <= 90; c++) LOWER_BIT[c] = 0x20;
for (let c = 48; c <= 57; c++) ASCII_CLASS[c] = 1;
for (let c = 97; c <= 122; c++) ASCII_CLASS[c] = 1;
for (let c = 65; c <= 90; c++) ASCII_CLASS[c] = 2;
/**
 * For asciiTokenSums: the lower-cased byte of an ASCII letter or digit, 0 for any other
 * byte. One lookup per character tells both whether the word goes on and what it holds.
 */
const ASCII_WORD_LOWER = new Uint8Array(256);
for (let c = 0; c < 128; c++) ASCII_WORD_LOWER[c] = ASCII_CLASS[c] === 0 ? 0 : c | (LOWER_BIT[c] as number);

/** Code point at i of a string (BMP fast path; a lone surrogate stands for itself). */
function codePointAt(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c < 0xd800 || c >= 0xdc00 || i + 1 >= text.length) return c;
  const d = text.charCodeAt(i + 1);
  return d >= 0xdc00 && d < 0xe000 ? ((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000 : c;
}

const isWordCode = (cp: number): boolean => (cp < 128 ? ASCII_CLASS[cp] !== 0 : !isSeparator(cp));

/** Prefix sums of both models' weights and feature counts over the tokens, with token offsets. */
export interface TokenSums {
  count: number;
  /** UTF-16 start and end (exclusive) of each token. */
  starts: Int32Array;
  ends: Int32Array;
  /**
   * Interleaved, 3 per token boundary: at 3k, 3k + 1, 3k + 2 the sums of model 0's and
   * model 1's int8 weights and the number of features over tokens [0, k). Doubles hold
   * these integer sums exactly, and any window's sums are two subtractions.
   */
  prefix: Float64Array;
}

const MAX_TOKEN_CPS = 4096;

/**
 * Weight sums of a word's own features (its word feature and 4-grams), by word. Prose
 * repeats a few hundred words most of the time, and a hit costs one comparison of the
 * word's code points instead of its 4-gram hashes and their scattered weight lookups.
 * Two-way: a word sits in the slot its hash picks or in the neighbouring one (slot ^ 16),
 * where the slot's previous word moves when a new one takes its place, so two frequent
 * words that pick the same slot do not evict each other on every turn (direct-mapped, the
 * bench conversation's 354 distinct words cost 422 recomputed words per scan). A hit
 * compares the code points themselves, so a cached sum is always exactly the one the word
 * would give: scores stay bit-for-bit.
 */
class TokenCache {
  static readonly SLOTS = 4096;
  /** Longer words are rare and not cached (their 4-grams are most of the work, but seldom repeat). */
  static readonly CHARS = 16;
  /**
   * One 64-byte entry per slot, so a lookup touches one cache line: word hash, length in
   * code points (0: empty), the three sums, then the code points two to an int (BMP only:
   * a word with any other code point is not cached, so 16 bits hold each exactly), and at
   * +13, +14 the id of the annotator that noted the word and its note (WordNotes).
   */
  readonly e = new Int32Array(TokenCache.SLOTS * 16);

  /** The entry offset of the slot that the hash picks; the word's other slot is this ^ 16. */
  static slotOf(h: number): number {
    return ((h ^ (h >>> 16)) & (TokenCache.SLOTS - 1)) << 4;
  }

  /** The entry offset holding the word pad[1..n] with hash h, or -1; sums at +2, +3, +4. */
  find(h: number, pad: Int32Array, n: number): number {
    const at = TokenCache.slotOf(h);
    return this.holds(at, h, pad, n) ? at : this.findOther(at, h, pad, n);
  }

  /** find, when the slot the hash picks (`at`) does not hold the word: its other slot. */
  findOther(at: number, h: number, pad: Int32Array, n: number): number {
    const other = at ^ 16;
    return this.holds(other, h, pad, n) ? other : -1;
  }

  private holds(at: number, h: number, pad: Int32Array, n: number): boolean {
    const e = this.e;
    if (e[at + 1] !== n || e[at] !== (h | 0)) return false;
    for (let k = 1, j = at + 5; k <= n; k += 2, j++) {
      const a = pad[k] as number;
      const b = k < n ? (pad[k + 1] as number) : 0;
      // A code point past the BMP would not pack into 16 bits; such words are never stored.
      if ((a | b) > 0xffff || e[j] !== (a | (b << 16))) return false;
    }
    return true;
  }

  sum0(at: number): number {
    return this.e[at + 2] as number;
  }

  sum1(at: number): number {
    return this.e[at + 3] as number;
  }

  count(at: number): number {
    return this.e[at + 4] as number;
  }

  /** The word's note by the annotator with this id (see WordNotes), or undefined. */
  note(at: number, annotator: number): number | undefined {
    return this.e[at + 13] === annotator ? (this.e[at + 14] as number) : undefined;
  }

  /** Records the word's note, if the word is cached (found at `at` by find). */
  setNote(h: number, pad: Int32Array, n: number, annotator: number, note: number): void {
    const at = this.find(h, pad, n);
    if (at < 0) return;
    this.e[at + 13] = annotator;
    this.e[at + 14] = note;
  }

  store(h: number, pad: Int32Array, n: number, s0: number, s1: number, f: number): void {
    if (n > TokenCache.CHARS) return;
    for (let k = 1; k <= n; k++) if ((pad[k] as number) > 0xffff) return;
    const e = this.e;
    const at = TokenCache.slotOf(h);
    // Called after find missed in both slots: the slot's word moves next door, whose word goes.
    if (e[at + 1] !== 0) e.copyWithin(at ^ 16, at, at + 16);
    e[at] = h | 0;
    e[at + 1] = n;
    e[at + 2] = s0;
    e[at + 3] = s1;
    e[at + 4] = f;
    // No note yet (annotator ids start at 1).
    e[at + 13] = 0;
    for (let k = 1, j = at + 5; k <= n; k += 2, j++)
      e[j] = (pad[k] as number) | ((k < n ? (pad[k + 1] as number) : 0) << 16);
  }
}

/**
 * Texts up to this many UTF-16 code units reuse buffers kept between calls: enough for most
 * requests and the bench's long conversation, so they allocate nothing. A longer text
 * allocates its own (about 16 bytes a code unit here), so it is not pinned after it.
 */
export const REUSED_TEXT_CHARS = 256 * 1024;

/** Most tokens a text of `length` code units can hold: each has a code unit and a separator after it. */
const tokenBound = (length: number): number => (length >> 1) + 1;

function tokenBuffers(size: number): TokenSums {
  return {
    count: 0,
    starts: new Int32Array(size),
    ends: new Int32Array(size),
    prefix: new Float64Array(3 * (size + 1)),
  };
}

export class FeatureScorer {
  private readonly mask: number;
  /** Code points of the current token, from index 1; index 0 and the end hold the 4-gram pads. */
  private readonly pad = new Int32Array(MAX_TOKEN_CPS + 2);

  constructor(
    private readonly spec: FeatureSpec,
    /** Interleaved int8 weights: [model0[0], model1[0], model0[1], model1[1], ...]. */
    private readonly weights: Int8Array,
  ) {
    this.mask = (1 << spec.dimBits) - 1;
    if (weights.length !== 2 << spec.dimBits)
      throw new Error(`learned guard weights: expected ${2 << spec.dimBits} values, got ${weights.length}`);
  }

  /** Weight sums of recently seen words (see TokenCache). */
  private readonly cache = new TokenCache();

  /**
   * Reused between calls (one text at a time per process), grown when a text needs more, up
   * to a text of REUSED_TEXT_CHARS: kept for the life of the process, so one huge message
   * must not size it for good.
   */
  private kept: TokenSums = tokenBuffers(0);
  /** The last call's buffers: `kept`, or a longer text's own until release(). */
  private buf: TokenSums = this.kept;

  /** Sums of the word last computed by wordSums: model 0, model 1, feature count. */
  private readonly word = new Int32Array(3);

  /**
   * Fills `word` with the sums of the word pad[1..n] (hash h), which is not in the cache:
   * its word feature and the 4-grams of \x02 word \x03 over its first maxGramChars code
   * points; then caches them. Both tokenizers call it on a cache miss.
   */
  private wordSums(h: number, n: number): void {
    const pad = this.pad;
    const w = this.weights;
    const mask = this.mask;
    const maxGram = this.spec.maxGramChars;
    const idx = (h & mask) << 1;
    let s0 = w[idx] as number;
    let s1 = w[idx + 1] as number;
    let f = 1;
    const g = n < maxGram ? n : maxGram;
    const saved = pad[g + 1] as number;
    pad[0] = 2;
    pad[g + 1] = 3;
    const padded = g + 2;
    if (padded <= 4) {
      let x = FNV_OFFSET ^ SEED_GRAM;
      for (let k = 0; k < padded; k++) x = Math.imul(x ^ (pad[k] as number), FNV_PRIME);
      const j = ((x >>> 0) & mask) << 1;
      s0 += w[j] as number;
      s1 += w[j + 1] as number;
      f++;
    } else {
      for (let j = 0; j + 4 <= padded; j++) {
        let x = Math.imul(FNV_OFFSET ^ SEED_GRAM ^ (pad[j] as number), FNV_PRIME);
        x = Math.imul(x ^ (pad[j + 1] as number), FNV_PRIME);
        x = Math.imul(x ^ (pad[j + 2] as number), FNV_PRIME);
        x = Math.imul(x ^ (pad[j + 3] as number), FNV_PRIME);
        const at = ((x >>> 0) & mask) << 1;
        s0 += w[at] as number;
        s1 += w[at + 1] as number;
        f++;
      }
    }
    pad[g + 1] = saved;
    this.cache.store(h, pad, n, s0, s1, f);
    const word = this.word;
    word[0] = s0;
    word[1] = s1;
    word[2] = f;
  }

  /**
   * tokenSums of an all-ASCII text given as its bytes, `bytes[0, length)`, with at least
   * one spare byte after them (overwritten during the call, then restored). Typed-array
   * reads cost less than string reads, and ASCII needs no code-point or toLowerCase path:
   * same tokens, same sums, about a tenth less time.
   */
  asciiTokenSums(bytes: Uint8Array, length: number, notes?: WordNotes): TokenSums {
    const out = this.sized(length);
    let noted = 0;
    if (notes && notes.tokens.length < out.starts.length) {
      notes.tokens = new Int32Array(out.starts.length);
      notes.values = new Int32Array(out.starts.length);
    }
    // Locals: after a call (a new word) V8 would load these again for every word.
    const annotator = notes?.annotator;
    const annotatorId = annotator ? annotator.id : 0;
    const noteTokens = notes ? notes.tokens : NO_NOTES;
    const noteValues = notes ? notes.values : NO_NOTES;
    const { starts, ends, prefix } = out;
    let c0 = 0;
    let c1 = 0;
    let cn = 0;
    prefix[0] = prefix[1] = prefix[2] = 0;
    const cache = this.cache;
    const e = cache.e;
    let count = 0;
    const pad = this.pad;
    const word = this.word;
    const w = this.weights;
    const mask = this.mask;
    // A separator after the text, so the token loop needs no bounds check of its own.
    const spare = bytes[length] as number;
    bytes[length] = 32;
    let prev = -1;
    let i = 0;
    while (i < length) {
      let lc = ASCII_WORD_LOWER[bytes[i] as number] as number;
      if (lc === 0) {
        i++;
        continue;
      }
      const start = i;
      let n = 0;
      let h = FNV_OFFSET ^ SEED_WORD;
      do {
        if (n < MAX_TOKEN_CPS) {
          pad[++n] = lc;
          h = Math.imul(h ^ lc, FNV_PRIME);
        }
        lc = ASCII_WORD_LOWER[bytes[++i] as number] as number;
      } while (lc !== 0);
      h >>>= 0;
      let s0: number;
      let s1: number;
      let f: number;
      // TokenCache.find for ASCII, inlined: no code point needs more than 16 bits, and a 0
      // after the word stands for the empty second half of its last packed pair.
      pad[n + 1] = 0;
      const home = TokenCache.slotOf(h);
      let slot = home;
      if (e[slot + 1] === n && e[slot] === (h | 0)) {
        for (let k = 1, j = slot + 5; k <= n; k += 2, j++)
          if (e[j] !== ((pad[k] as number) | ((pad[k + 1] as number) << 16))) {
            slot = -1;
            break;
          }
      } else slot = -1;
      if (slot < 0) slot = cache.findOther(home, h, pad, n);
      if (slot >= 0) {
        s0 = e[slot + 2] as number;
        s1 = e[slot + 3] as number;
        f = e[slot + 4] as number;
      } else {
        this.wordSums(h, n);
        s0 = word[0] as number;
        s1 = word[1] as number;
        f = word[2] as number;
      }
      if (annotator) {
        let note: number;
        if (slot >= 0 && e[slot + 13] === annotatorId) note = e[slot + 14] as number;
        else {
          // A word longer than the pad holds is noted on its first MAX_TOKEN_CPS characters.
          note = annotator.annotate(pad, n, i - start > n);
          cache.setNote(h, pad, n, annotatorId, note);
        }
        // Written always, kept (counted) only when not 0: no branch to mispredict.
        noteTokens[noted] = count;
        noteValues[noted] = note;
        noted += note !== 0 ? 1 : 0;
      }
      if (prev >= 0) {
        const b = Math.imul(Math.imul(prev ^ 0x9e3779b9, FNV_PRIME) ^ h, FNV_PRIME) >>> 0;
        const idx = (b & mask) << 1;
        s0 += w[idx] as number;
        s1 += w[idx + 1] as number;
        f++;
      }
      prev = h;
      starts[count] = start;
      ends[count] = i;
      count++;
      c0 += s0;
      c1 += s1;
      cn += f;
      const o = 3 * count;
      prefix[o] = c0;
      prefix[o + 1] = c1;
      prefix[o + 2] = cn;
    }
    bytes[length] = spare;
    if (notes) notes.count = noted;
    out.count = count;
    return out;
  }

  /** The result of the last call of tokenSums or asciiTokenSums. */
  get lastTokens(): TokenSums {
    return this.buf;
  }

  /**
   * Buffers for a text of `length` code units: the reused ones, grown when needed, or for a
   * text past REUSED_TEXT_CHARS buffers of its own, garbage once release() or the next call
   * drops them.
   */
  private sized(length: number): TokenSums {
    const cap = tokenBound(length);
    if (length > REUSED_TEXT_CHARS) return (this.buf = tokenBuffers(cap));
    if (this.kept.starts.length < cap)
      this.kept = tokenBuffers(
        Math.min(Math.max(cap, this.kept.starts.length * 2), tokenBound(REUSED_TEXT_CHARS)),
      );
    return (this.buf = this.kept);
  }

  /** Drops a long text's own buffers (see sized); lastTokens is not valid after this. */
  release(): void {
    this.buf = this.kept;
  }

  /** Bytes of the buffers this scorer holds on to between texts (for tests). */
  get retainedBytes(): number {
    const size = (t: TokenSums): number => t.starts.byteLength + t.ends.byteLength + t.prefix.byteLength;
    return size(this.kept) + (this.buf === this.kept ? 0 : size(this.buf));
  }

  /** The returned arrays are valid until the next call. */
  tokenSums(text: string): TokenSums {
    const out = this.sized(text.length);
    // Locals, not property loads per token: V8 cannot hoist loads past the typed-array stores.
    const { starts, ends, prefix } = out;
    // Running sums, written per token: the prefix sums come out of this pass, not a second one.
    let c0 = 0;
    let c1 = 0;
    let cn = 0;
    prefix[0] = prefix[1] = prefix[2] = 0;
    const cache = this.cache;
    let count = 0;
    const pad = this.pad;
    const w = this.weights;
    const mask = this.mask;
    const word = this.word;
    let prev = -1;
    let i = 0;
    const len = text.length;
    while (i < len) {
      let cp = text.charCodeAt(i);
      if (cp < 128) {
        if (ASCII_CLASS[cp] === 0) {
          i++;
          continue;
        }
      } else {
        cp = codePointAt(text, i);
        if (isSeparator(cp)) {
          i += cp > 0xffff ? 2 : 1;
          continue;
        }
      }
      // Read the token: lower-case ASCII in place, anything else through toLowerCase. The
      // word hash (over the whole token) is taken while reading.
      const start = i;
      let n = 0;
      let ascii = true;
      let h = FNV_OFFSET ^ SEED_WORD;
      while (i < len) {
        const c = text.charCodeAt(i);
        if (c < 128) {
          const k = ASCII_CLASS[c];
          if (k === 0) break;
          if (n < MAX_TOKEN_CPS) {
            const lc = k === 2 ? c | 0x20 : c;
            pad[++n] = lc;
            h = Math.imul(h ^ lc, FNV_PRIME);
          }
          i++;
        } else {
          const p = codePointAt(text, i);
          if (!isWordCode(p)) break;
          ascii = false;
          i += p > 0xffff ? 2 : 1;
        }
      }
      if (!ascii) {
        n = 0;
        h = FNV_OFFSET ^ SEED_WORD;
        const lower = text.slice(start, i).toLowerCase();
        for (let k = 0; k < lower.length && n < MAX_TOKEN_CPS;) {
          const p = codePointAt(lower, k);
          pad[++n] = p;
          h = Math.imul(h ^ p, FNV_PRIME);
          k += p > 0xffff ? 2 : 1;
        }
      }
      h >>>= 0;
      let s0: number;
      let s1: number;
      let f: number;
      const slot = cache.find(h, pad, n);
      if (slot >= 0) {
        s0 = cache.sum0(slot);
        s1 = cache.sum1(slot);
        f = cache.count(slot);
      } else {
        this.wordSums(h, n);
        s0 = word[0] as number;
        s1 = word[1] as number;
        f = word[2] as number;
      }
      // The word-pair feature depends on the previous token, so it is never cached.
      if (prev >= 0) {
        const b = Math.imul(Math.imul(prev ^ 0x9e3779b9, FNV_PRIME) ^ h, FNV_PRIME) >>> 0;
        const idx = (b & mask) << 1;
        s0 += w[idx] as number;
        s1 += w[idx + 1] as number;
        f++;
      }
      prev = h;
      starts[count] = start;
      ends[count] = i;
      count++;
      c0 += s0;
      c1 += s1;
      cn += f;
      const o = 3 * count;
      prefix[o] = c0;
      prefix[o + 1] = c1;
      prefix[o + 2] = cn;
    }
    out.count = count;
    return out;
  }
}

/**
 * Something else to know about each word, worked out from its characters once per distinct
 * word and kept beside its sums in the word cache: another detector's per-word test rides
 * on the tokenizer's pass and cache instead of making its own pass over the text. `id`
 * (>= 1, one per annotator) tells whose note a cache entry holds.
 */
export interface WordAnnotator {
  readonly id: number;
  /**
   * The note of the word pad[1..n] (lower-cased code points); 0 means nothing to note.
   * `truncated`: the word goes on past pad[n] (longer than the pad holds; never cached).
   */
  annotate(pad: Int32Array, n: number, truncated: boolean): number;
}

/** Tokens with a non-zero note, filled by asciiTokenSums: token index and note, `count` of them. */
export interface WordNotes {
  annotator: WordAnnotator;
  tokens: Int32Array;
  values: Int32Array;
  count: number;
}

const NO_NOTES = new Int32Array(0);

/** Window [from, to) of tokens. */
export type Window = [number, number];

function spans(count: number, size: number, stride: number, visit: (a: number, b: number) => void): void {
  if (count <= size) {
    visit(0, count);
    return;
  }
  for (let a = 0; a < count - size; a += stride) visit(a, a + size);
  visit(count - size, count);
}

/**
 * The windows a text is scored on (as scripts/guards/features.py): `window` tokens every
 * `stride`, the last ending at the end, plus `smallWindow`-token ones every `smallStride`
 * when the text is longer than that, so a short attack after a long message still fills
 * most of some window.
 */
export function forEachWindow(count: number, spec: FeatureSpec, visit: (a: number, b: number) => void): void {
  spans(count, spec.window, spec.stride, visit);
  if (count > spec.smallWindow) spans(count, spec.smallWindow, spec.smallStride, visit);
}

export function windows(count: number, spec: FeatureSpec): Window[] {
  const out: Window[] = [];
  forEachWindow(count, spec, (a, b) => out.push([a, b]));
  return out;
}
