import { describe, expect, it } from 'vitest';
import { sampleSync, summariseTimes } from './timing.ts';

describe('summariseTimes', () => {
  it('sorts numerically and gives nearest-rank percentiles, mean and max', () => {
    const t = summariseTimes([10, 2, 9, 100]);
    expect(t).toEqual({ iterations: 4, p50: 9, p99: 100, mean: 30.25, max: 100 });
  });

  it('is all NaN without samples', () => {
    const t = summariseTimes([]);
    expect(t.iterations).toBe(0);
    expect([t.p50, t.p99, t.mean, t.max].every(Number.isNaN)).toBe(true);
  });
});

describe('sampleSync', () => {
  it('calls warm-up and measured iterations, and records only the measured ones', () => {
    let calls = 0;
    const samples = sampleSync(() => calls++, { warmup: 3, iterations: 5 });
    expect(calls).toBe(8);
    expect(samples).toHaveLength(5);
    expect(samples.every((s) => s >= 0)).toBe(true);
  });
});
