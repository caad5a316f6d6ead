import { describe, expect, it } from 'vitest';
import { believableUsage, isTokenCount, MAX_REPORTED_TOKENS } from './reported-usage.ts';

describe('believableUsage', () => {
  it('keeps a true report, recomputing a total that disagrees', () => {
    expect(believableUsage({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 999 })).toEqual({
      prompt_tokens: 10,
      completion_tokens: 5,
      total_tokens: 15,
    });
    // Embeddings report no completion.
    expect(believableUsage({ prompt_tokens: 4, total_tokens: 4 })).toMatchObject({ completion_tokens: 0 });
  });

  it.each([
    ['negative', { prompt_tokens: -1, completion_tokens: 5 }],
    ['absurd', { prompt_tokens: 1e300, completion_tokens: 5 }],
    ['past the bound', { prompt_tokens: MAX_REPORTED_TOKENS + 1, completion_tokens: 0 }],
    ['fractional', { prompt_tokens: 1.5, completion_tokens: 5 }],
    ['a string', { prompt_tokens: '10', completion_tokens: 5 }],
    ['NaN', { prompt_tokens: Number.NaN, completion_tokens: 5 }],
    ['missing prompt', { completion_tokens: 5 }],
  ])('refuses a %s count', (_name, raw) => {
    expect(believableUsage(raw)).toBeUndefined();
  });

  it('refuses what is not a report', () => {
    for (const raw of [undefined, null, 7, 'usage', [1, 2]]) expect(believableUsage(raw)).toBeUndefined();
  });

  it('drops a cached or reasoning count that does not fit inside its parent, keeping the rest', () => {
    const usage = believableUsage({
      prompt_tokens: 10,
      completion_tokens: 5,
      prompt_tokens_details: { cached_tokens: 11, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: -2 },
    });
    expect(usage?.prompt_tokens_details).toEqual({ audio_tokens: 0 });
    expect(usage?.completion_tokens_details).toEqual({});
    expect(
      believableUsage({
        prompt_tokens: 10,
        completion_tokens: 5,
        prompt_tokens_details: { cached_tokens: 10 },
      })?.prompt_tokens_details,
    ).toEqual({ cached_tokens: 10 });
  });

  it('isTokenCount bounds: 0 and the bound are counts', () => {
    expect(isTokenCount(0)).toBe(true);
    expect(isTokenCount(MAX_REPORTED_TOKENS)).toBe(true);
    expect(isTokenCount(-0.5)).toBe(false);
  });
});
