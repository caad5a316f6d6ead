/**
 * A static sentence embedding of a turn: the mean of all-MiniLM-L6-v2's word vectors over its
 * first tokens, unit length, plus the token count. No transformer runs: one table look-up per
 * token (p50 0.03 ms, p99 0.15 ms on MT-bench prompts on a loaded machine), cache on or off. The
 * table is the minilm cache embedder's (cache/minilm-words.ts), read once on first use, shared.
 *
 * Serving does not call it (so it lives with the evaluation code): scripts/train-routing-static.ts scored an outcome model over
 * it by leave-one-domain-out AUC, and it ranked domains it had not trained on no better than
 * the token count alone and worse than the shipped model (README "Routing against outcomes").
 * It stays, tested, for whoever tries the next feature family on the same folds.
 *
 * Tokenization is BERT's uncased WordPiece cut down to what a hot path can afford: ASCII is
 * lower-cased, split at spaces and punctuation and cut into the longest vocabulary pieces;
 * other characters stay inside their word (no accent stripping, no CJK split), so such words
 * mostly become [UNK].
 */
import { minilmDir } from '../../dataplane/src/pipeline/cache/minilm-embedder.ts';
import {
  minilmWords,
  type MinilmWords,
  type WordTable,
} from '../../dataplane/src/pipeline/cache/minilm-words.ts';
import type { WordPieceVocab } from '../../dataplane/src/pipeline/cache/wordpiece.ts';

export const STATIC_DIMENSIONS = 384;
/** Tokens counted; the count's signal (longer asks fail more often) is flat past this. */
export const COUNT_TOKENS = 256;
/** Tokens averaged: the ask is at the start, and each one costs a 384-wide add. */
export const EMBED_TOKENS = 128;
/** Characters read: 256 tokens of real text fit in far fewer. */
const MAX_CHARS = 2000;
const MAX_WORD_CHARS = 100;

export interface StaticEmbedding {
  /** WordPiece tokens in the first MAX_CHARS characters, at most COUNT_TOKENS. */
  tokens: number;
  /** Unit-length mean of the first EMBED_TOKENS tokens' vectors (zero when there are none). */
  vector: Float32Array;
}

let table: MinilmWords | undefined;
// Per-call state kept at module level: no closures or arrays made per request.
const sum = new Float32Array(STATIC_DIMENSIONS);
let tokens = 0;

const isAsciiPunct = (c: number): boolean =>
  (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126);
const isSpace = (c: number): boolean => c === 32 || (c >= 9 && c <= 13) || c === 0xa0;

function addToken(words: WordTable, id: number): void {
  if (tokens < EMBED_TOKENS) {
    const s = words.scales[id] as number;
    const from = id * STATIC_DIMENSIONS;
    for (let j = 0; j < STATIC_DIMENSIONS; j++)
      sum[j] = (sum[j] as number) + (words.rows[from + j] as number) * s;
  }
  tokens++;
}

const pieces: number[] = [];

/**
 * Greedy longest WordPiece ids of one lower-cased word into `out` (cleared first), as BERT
 * cuts it; false when a rest is not in the vocabulary (BERT then makes the word one [UNK]).
 * Shared with the item-difficulty features (routing-item-features.ts), which count pieces.
 */
export function wordPieces(vocab: WordPieceVocab, word: string, out: number[], max = COUNT_TOKENS): boolean {
  out.length = 0;
  if (word.length > MAX_WORD_CHARS) return false;
  let start = 0;
  while (start < word.length && out.length < max) {
    let end = word.length;
    let id: number | undefined;
    while (end > start) {
      id = vocab.ids.get(start > 0 ? `##${word.slice(start, end)}` : word.slice(start, end));
      if (id !== undefined) break;
      end--;
    }
    if (id === undefined) return false;
    out.push(id);
    start = end;
  }
  return true;
}

/** A word's pieces, or one [UNK] when a rest is unknown (the word counts as one token). */
function addWord({ vocab, words }: MinilmWords, word: string): void {
  if (!wordPieces(vocab, word, pieces, COUNT_TOKENS - tokens)) return addToken(words, vocab.unk);
  for (const id of pieces) addToken(words, id);
}

/**
 * Embeds `text`. The returned vector is a buffer reused by the next call (the classifier
 * runs on every request and must not feed the garbage collector): read it before calling again.
 */
export function staticEmbedding(text: string, dir?: string): StaticEmbedding {
  table ??= minilmWords(dir ?? minilmDir());
  const t = table;
  sum.fill(0);
  tokens = 0;
  const head = (text.length > MAX_CHARS ? text.slice(0, MAX_CHARS) : text).toLowerCase();
  let wordStart = -1;
  for (let i = 0; i <= head.length && tokens < COUNT_TOKENS; i++) {
    const c = i < head.length ? head.charCodeAt(i) : 32;
    const space = isSpace(c);
    const punct = !space && isAsciiPunct(c);
    if (space || punct) {
      if (wordStart >= 0) addWord(t, head.slice(wordStart, i));
      wordStart = -1;
      if (punct && tokens < COUNT_TOKENS)
        addToken(t.words, t.vocab.ids.get(head[i] as string) ?? t.vocab.unk);
    } else if (wordStart < 0) wordStart = i;
  }
  let norm = 0;
  for (let j = 0; j < STATIC_DIMENSIONS; j++) norm += (sum[j] as number) ** 2;
  if (norm > 0) {
    const inv = 1 / Math.sqrt(norm);
    for (let j = 0; j < STATIC_DIMENSIONS; j++) sum[j] = (sum[j] as number) * inv;
  }
  return { tokens, vector: sum };
}
