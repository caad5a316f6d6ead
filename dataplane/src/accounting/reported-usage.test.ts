import { describe, expect, it } from 'vitest';
import {
  believableUsage,
  boundedPromptTokens,
  boundedUsage,
  isTokenCount,
  MAX_REPORTED_TOKENS,
  MAX_UNBOUNDED_OUTPUT_TOKENS,
  usageCeilings,
  type UsageBounds,
} from './reported-usage.ts';

describe('believableUsage', () => {
  it('keeps a true report, recomputing a total that disagrees', () => {
    expect(believableUsage({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 999 })).toEqual({
      prompt_tokens: 10,
      completion_tokens: 5,
      total_tokens: 15,
    });
    // A report without an output count would bill the answer as free output.
    expect(believableUsage({ prompt_tokens: 4, total_tokens: 4 })).toBeUndefined();
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

describe('usage held against the request it answers', () => {
  const bounds = (over: Partial<UsageBounds> = {}): UsageBounds => ({
    promptTokens: 100,
    output: { maxTokens: 5 },
    deployment: { contextWindow: undefined, maxOutputTokens: undefined },
    answered: true,
    ...over,
  });
  const usage = (prompt: number, completion: number) => ({
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
  });

  it('output is bounded by max_tokens × sequences, else the deployment’s limit, else a ceiling', () => {
    expect(usageCeilings(bounds()).completion).toBe(5);
    expect(usageCeilings(bounds({ output: { maxTokens: 5, sequences: 3 } })).completion).toBe(15);
    expect(
      usageCeilings(
        bounds({
          output: { maxTokens: undefined },
          deployment: { contextWindow: undefined, maxOutputTokens: 800 },
        }),
      ).completion,
    ).toBe(800);
    expect(usageCeilings(bounds({ output: { maxTokens: undefined } })).completion).toBe(
      MAX_UNBOUNDED_OUTPUT_TOKENS,
    );
  });

  it('the prompt by the context window, else only by the sanity cap (the own count is too rough)', () => {
    expect(
      usageCeilings(bounds({ deployment: { contextWindow: 8_192, maxOutputTokens: undefined } })).prompt,
    ).toBe(8_192);
    expect(usageCeilings(bounds()).prompt).toBe(MAX_REPORTED_TOKENS);
    // A legacy completions `suffix` (or a response_format schema) is not in the own count of 3:
    // a real 20,822-token prompt is billed as reported.
    expect(boundedUsage(usage(20_822, 4), bounds({ promptTokens: 3 }))).toEqual(usage(20_822, 4));
  });

  it('a count over its ceiling is cut to it; one within is kept as is', () => {
    expect(boundedUsage(usage(9, 1_000_000_000), bounds())).toEqual(usage(9, 5));
    const window = { contextWindow: 4_896, maxOutputTokens: undefined };
    expect(boundedUsage(usage(1_000_000, 3), bounds({ deployment: window }))).toEqual(usage(4_896, 3));
    const fine = usage(90, 4);
    expect(boundedUsage(fine, bounds())).toBe(fine);
  });

  it('cut counts keep their details inside them', () => {
    const cut = boundedUsage(
      { ...usage(9, 900), completion_tokens_details: { reasoning_tokens: 800 } },
      bounds(),
    );
    expect(cut?.completion_tokens).toBe(5);
    expect(cut?.completion_tokens_details).toEqual({});
  });

  it('no prompt for a prompt, or no output for an answer, is no report', () => {
    expect(boundedUsage(usage(0, 3), bounds())).toBeUndefined();
    expect(boundedUsage(usage(9, 0), bounds())).toBeUndefined();
    // An empty answer (a length stop at once) may report no output; an empty prompt no input.
    expect(boundedUsage(usage(9, 0), bounds({ answered: false }))).toEqual(usage(9, 0));
    expect(boundedUsage(usage(0, 3), bounds({ promptTokens: 0 }))).toEqual(usage(0, 3));
  });

  it('a prompt reported before a cut is held to the same rules', () => {
    expect(boundedPromptTokens(50, bounds())).toBe(50);
    expect(boundedPromptTokens(0, bounds())).toBeUndefined();
    expect(boundedPromptTokens(1e300, bounds())).toBeUndefined();
    expect(
      boundedPromptTokens(
        1_000_000,
        bounds({ deployment: { contextWindow: 4_896, maxOutputTokens: undefined } }),
      ),
    ).toBe(4_896);
    expect(boundedPromptTokens(1_000_000, bounds())).toBe(1_000_000);
    expect(boundedPromptTokens(undefined, bounds())).toBeUndefined();
  });
});
