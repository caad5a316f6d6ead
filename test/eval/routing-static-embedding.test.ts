import { describe, expect, it } from 'vitest';
import { minilmDir } from '../../dataplane/src/pipeline/cache/minilm-embedder.ts';
import { minilmWords } from '../../dataplane/src/pipeline/cache/minilm-words.ts';
import { encodeWordPiece } from '../../dataplane/src/pipeline/cache/wordpiece.ts';
import {
  COUNT_TOKENS,
  EMBED_TOKENS,
  STATIC_DIMENSIONS,
  staticEmbedding,
} from './routing-static-embedding.ts';

const { vocab, words } = minilmWords(minilmDir());

/** The same embedding the slow, obvious way: the cache's full BERT tokenizer, then a mean. */
function reference(text: string): { tokens: number; vector: number[] } {
  const ids = encodeWordPiece(text, vocab, 10_000).slice(1, -1);
  const sum = new Array<number>(STATIC_DIMENSIONS).fill(0);
  for (const id of ids.slice(0, EMBED_TOKENS))
    for (let j = 0; j < STATIC_DIMENSIONS; j++)
      sum[j] =
        (sum[j] as number) +
        (words.rows[id * STATIC_DIMENSIONS + j] as number) * (words.scales[id] as number);
  const norm = Math.hypot(...sum);
  return { tokens: Math.min(ids.length, COUNT_TOKENS), vector: sum.map((v) => (norm ? v / norm : 0)) };
}

describe('static embedding', () => {
  it('tokenizes ASCII text exactly as the BERT tokenizer and averages the same rows', () => {
    for (const text of [
      'How do I reset my password?',
      'Write a function `f(x)` that returns x**2 + 3; e.g. f(2) == 7.',
      'The QUICK brown fox... jumped over 12,345 lazy dogs!!! (unbelievably)',
      'def has_close_elements(numbers: List[float], threshold: float) -> bool:\n    """ Check """',
    ]) {
      const got = staticEmbedding(text);
      const want = reference(text);
      expect(got.tokens).toBe(want.tokens);
      const cos = want.vector.reduce((s, v, j) => s + v * (got.vector[j] as number), 0);
      expect(cos).toBeGreaterThan(0.99999);
    }
  });

  it('is unit length, zero for a text without tokens, and bounded for a huge one', () => {
    const v = staticEmbedding('Explain the difference between TCP and UDP.').vector;
    expect(Math.hypot(...v)).toBeCloseTo(1, 5);
    const empty = staticEmbedding('   \n\t ');
    expect(empty.tokens).toBe(0);
    expect([...empty.vector].every((x) => x === 0)).toBe(true);
    const huge = staticEmbedding('word '.repeat(1_000_000));
    expect(huge.tokens).toBeLessThanOrEqual(COUNT_TOKENS);
    expect(huge.tokens).toBeGreaterThan(EMBED_TOKENS);
  });

  it('counts a word of unknown pieces as one [UNK], and non-ASCII words stay whole', () => {
    // Not in the vocabulary at any split: one token.
    expect(staticEmbedding('\u{1F600}\u{1F600}\u{1F600}').tokens).toBe(1);
    expect(staticEmbedding('x'.repeat(150)).tokens).toBe(1);
    expect(staticEmbedding('naïve café').tokens).toBeGreaterThanOrEqual(2);
  });
});
