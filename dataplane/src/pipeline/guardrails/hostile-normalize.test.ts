/**
 * Collapsing spaced-out letters over one long run: whether the text built so far ended in a
 * space was asked of a string grown by +=, which copied it each time (one message of
 * "i g n o r e " repeated over 1 MB took 14.5 s to scan). The collapsed text must not change.
 */
import { describe, expect, it } from 'vitest';
import { normalizeWindow, wordSegmenter } from './normalize.ts';

describe('normalizeWindow on one long run of spaced letters', () => {
  const words = wordSegmenter(['ignore', 'previous', 'instructions']);

  it('collapses every spaced word, cut at known words, keeping each letter offset', () => {
    const text = 'i g n o r e '.repeat(100_000);
    const out = normalizeWindow(text, 0, text.length, words);
    expect(out.text).toBe('ignore '.repeat(100_000));
    // "ignore" k starts at 12k; its last letter at 12k + 10, its space at 12k + 11.
    const k = 77_777;
    expect(out.map.slice(7 * k, 7 * k + 7)).toEqual([0, 2, 4, 6, 8, 10, 12].map((d) => 12 * k + d));
  });
});
