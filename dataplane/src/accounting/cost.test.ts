import { describe, expect, it } from 'vitest';
import type { Pricing } from '../config/snapshot.ts';
import { costUsd, formatUsd } from './cost.ts';

const pricing: Pricing = { inputPerMillionTokens: 2.5, outputPerMillionTokens: 10 };

describe('costUsd', () => {
  it('no pricing → free', () => {
    expect(costUsd(undefined, { prompt_tokens: 1_000_000, completion_tokens: 1_000_000 })).toBe(0);
  });

  it('prices input and output per million tokens', () => {
    expect(costUsd(pricing, { prompt_tokens: 1_000_000, completion_tokens: 0 })).toBe(2.5);
    expect(costUsd(pricing, { prompt_tokens: 0, completion_tokens: 1_000_000 })).toBe(10);
    expect(costUsd(pricing, { prompt_tokens: 1_000, completion_tokens: 500 })).toBeCloseTo(
      0.0025 + 0.005,
      12,
    );
    expect(costUsd(pricing, { prompt_tokens: 0, completion_tokens: 0 })).toBe(0);
  });

  it('cached prompt tokens are billed at the cached rate, the rest at the input rate', () => {
    const p: Pricing = { ...pricing, cachedInputPerMillionTokens: 1.25 };
    const usage = {
      prompt_tokens: 1_000,
      completion_tokens: 0,
      prompt_tokens_details: { cached_tokens: 400 },
    };
    expect(costUsd(p, usage)).toBeCloseTo((600 * 2.5 + 400 * 1.25) / 1e6, 12);
  });

  it('without a cached rate, cached tokens cost the input rate', () => {
    const usage = {
      prompt_tokens: 1_000,
      completion_tokens: 0,
      prompt_tokens_details: { cached_tokens: 400 },
    };
    expect(costUsd(pricing, usage)).toBeCloseTo((1_000 * 2.5) / 1e6, 12);
  });

  it('a free cached rate (0) is honoured, not replaced by the input rate', () => {
    const p: Pricing = { ...pricing, cachedInputPerMillionTokens: 0 };
    const usage = {
      prompt_tokens: 1_000,
      completion_tokens: 0,
      prompt_tokens_details: { cached_tokens: 1_000 },
    };
    expect(costUsd(p, usage)).toBe(0);
  });

  it('cached tokens above the prompt count are clamped (never a negative uncached part)', () => {
    const p: Pricing = { ...pricing, cachedInputPerMillionTokens: 1 };
    const usage = {
      prompt_tokens: 100,
      completion_tokens: 0,
      prompt_tokens_details: { cached_tokens: 5_000 },
    };
    expect(costUsd(p, usage)).toBeCloseTo(100 / 1e6, 12);
  });

  it('empty prompt_tokens_details counts nothing as cached', () => {
    const p: Pricing = { ...pricing, cachedInputPerMillionTokens: 0 };
    expect(costUsd(p, { prompt_tokens: 1_000_000, completion_tokens: 0, prompt_tokens_details: {} })).toBe(
      2.5,
    );
  });
});

describe('formatUsd', () => {
  it.each([
    [0, '0.0'],
    [1, '1.0'],
    [10, '10.0'],
    [100, '100.0'],
    [1.5, '1.5'],
    [0.0025, '0.0025'],
    [0.000001, '0.000001'],
    [0.000123, '0.000123'],
    // Charges are whole micro-dollars: less is stated as the nearest one.
    [0.0000004, '0.0'],
    [0.0000005, '0.000001'],
    [123.456, '123.456'],
    // Large costs without float noise (toFixed(10) gave 2500000.2999999998).
    [2_500_000.3, '2500000.3'],
    [1_500_000_000.123457, '1500000000.123457'],
    [-2.5, '-2.5'],
  ])('%s → %s', (usd, text) => {
    expect(formatUsd(usd)).toBe(text);
  });

  it('never uses exponent notation for small amounts', () => {
    for (let e = -1; e >= -10; e--) expect(formatUsd(10 ** e)).not.toMatch(/e/i);
    expect(formatUsd(1e300)).not.toMatch(/e/i);
  });

  it('formats a real cost as a plain decimal that parses back', () => {
    const usd = costUsd(pricing, { prompt_tokens: 1_234, completion_tokens: 567 });
    const text = formatUsd(usd);
    expect(text).toMatch(/^\d+\.\d{1,6}$/);
    expect(Number(text)).toBeCloseTo(usd, 10);
  });
});
