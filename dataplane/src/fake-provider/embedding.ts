/**
 * Deterministic fake embeddings. Each word maps to a hash-seeded pseudo-random vector and a
 * text is the normalised sum of its words, so equal texts give equal vectors and texts that
 * share words are measurably closer than unrelated ones (the semantic cache can be tested).
 */
import { createHash } from 'node:crypto';
import { normalizeText } from './behaviour.ts';

export const DEFAULT_EMBEDDING_DIMS = 16;

function wordVector(word: string, dims: number): number[] {
  const out: number[] = [];
  for (let block = 0; out.length < dims; block++) {
    const digest = createHash('sha256').update(`${block}:${word}`).digest();
    for (let i = 0; i + 1 < digest.length && out.length < dims; i += 2) {
      out.push(digest.readUInt16LE(i) / 32767.5 - 1);
    }
  }
  return out;
}

/** A unit vector of `dims` numbers for `text` (case and whitespace insensitive). */
export function fakeEmbedding(text: string, dims: number = DEFAULT_EMBEDDING_DIMS): number[] {
  const size = Math.max(1, Math.floor(dims));
  const words = normalizeText(text).toLowerCase().split(' ');
  const sum = new Array<number>(size).fill(0);
  for (const word of words) {
    const v = wordVector(word, size);
    for (let i = 0; i < size; i++) sum[i] = (sum[i] ?? 0) + (v[i] ?? 0);
  }
  const norm = Math.sqrt(sum.reduce((n, x) => n + x * x, 0));
  if (norm === 0) return sum.map((_, i) => (i === 0 ? 1 : 0));
  return sum.map((x) => x / norm);
}

/** OpenAI's `encoding_format: base64`: little-endian float32 bytes. */
export function toBase64(vector: number[]): string {
  const buf = Buffer.alloc(vector.length * 4);
  vector.forEach((x, i) => buf.writeFloatLE(x, i * 4));
  return buf.toString('base64');
}
