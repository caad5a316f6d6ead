import { describe, expect, it } from 'vitest';
import { estimateTextTokens } from '../accounting/tokens.ts';
import { embeddingInputTokens } from './simple.ts';

describe('embeddingInputTokens: what an embeddings request holds budget for', () => {
  it('counts token-id inputs by their length (they used to count as nothing)', () => {
    expect(embeddingInputTokens([1, 2, 3, 4])).toBeGreaterThanOrEqual(4);
    const batch = Array.from({ length: 10 }, () => Array.from({ length: 500 }, (_, i) => i));
    expect(embeddingInputTokens(batch)).toBeGreaterThanOrEqual(5000);
  });

  it('tokenises text inputs, every one of a batch', () => {
    const one = 'the quick brown fox jumps over the lazy dog';
    expect(embeddingInputTokens(one)).toBe(estimateTextTokens(one));
    expect(embeddingInputTokens([one, one, one])).toBeGreaterThanOrEqual(3 * estimateTextTokens(one));
  });
});
