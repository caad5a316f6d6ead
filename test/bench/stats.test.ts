import { describe, expect, it } from 'vitest';
import { mergeSamples, percentile, summarise } from './stats.ts';

describe('percentile', () => {
  it('uses the nearest rank', () => {
    const xs = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
    expect(percentile(xs, 0.5)).toBe(5);
    expect(percentile(xs, 0.99)).toBe(10);
    expect(percentile(xs, 0)).toBe(1);
    expect(percentile([], 0.5)).toBeNaN();
  });
});

describe('summarise', () => {
  it('sorts numerically and derives requests per second from the elapsed time', () => {
    const s = summarise({
      elapsedMs: 2000,
      latencyMs: [10, 9, 100, 2],
      firstByteMs: [],
      errors: 1,
      firstError: 'x',
    });
    expect(s).toMatchObject({ requests: 4, errors: 1, rps: 2, p50: 9, p99: 100, firstError: 'x' });
    expect(s.ttfbP50).toBeNaN();
  });
});

describe('mergeSamples', () => {
  it('adds elapsed time and errors, concatenates samples and keeps the first error seen', () => {
    const m = mergeSamples([
      { elapsedMs: 100, latencyMs: [1, 2], firstByteMs: [0.5], errors: 0 },
      { elapsedMs: 50, latencyMs: [3], firstByteMs: [], errors: 2, firstError: 'a' },
      { elapsedMs: 50, latencyMs: [], firstByteMs: [], errors: 1, firstError: 'b' },
    ]);
    expect(m).toEqual({
      elapsedMs: 200,
      latencyMs: [1, 2, 3],
      firstByteMs: [0.5],
      errors: 3,
      firstError: 'a',
    });
    expect(summarise(m).rps).toBe(15);
  });
});
