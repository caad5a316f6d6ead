import { describe, expect, it } from 'vitest';
import {
  cacheChecks,
  nearDuplicate,
  prng,
  questionSource,
  readCacheSettings,
  type SizeResult,
} from './cache-lookup.ts';
import { summariseTimes } from './timing.ts';

const result = (entries: number, p50: number): SizeResult => {
  const t = summariseTimes([p50]);
  return {
    entries,
    fillSeconds: 1,
    indexMb: 1,
    lookup: { hit: t, miss: t, all: t },
    search: { hit: t, miss: t, all: t },
    sourceFound: 1,
    hitBand: 1,
    nearDuplicates: 1,
  };
};

describe('cache lookup section', () => {
  it('reads sizes sorted and deduplicated, and rejects bad ones', () => {
    expect(readCacheSettings({})).toEqual({ sizes: [10_000, 100_000], probes: 1000 });
    expect(readCacheSettings({ BENCH_CACHE_SIZES: '5000,1000,5000' }).sizes).toEqual([1000, 5000]);
    expect(() => readCacheSettings({ BENCH_CACHE_SIZES: '1e3,x' })).toThrow(/BENCH_CACHE_SIZES/);
  });

  it('generates the same questions for the same seed', () => {
    const a = questionSource(42);
    const b = questionSource(42);
    const qa = Array.from({ length: 20 }, a);
    expect(Array.from({ length: 20 }, b)).toEqual(qa);
    expect(new Set(qa.map((q) => q.query)).size).toBeGreaterThan(15);
    const r = prng(1);
    const xs = Array.from({ length: 1000 }, r);
    expect(xs.every((x) => x >= 0 && x < 1)).toBe(true);
  });

  it('makes near-duplicates that differ from the question', () => {
    const q = 'How can I fix the CI pipeline in production?';
    const variants = [0, 1, 2].map((v) => nearDuplicate(q, v));
    expect(new Set(variants).size).toBe(3);
    expect(variants).not.toContain(q);
  });

  it('checks the p50 at 100k entries, and skips when 100k was not run', () => {
    expect(cacheChecks([result(10_000, 0.1), result(100_000, 0.4)])[0]).toMatchObject({ verdict: 'PASS' });
    expect(cacheChecks([result(100_000, 1.2)])[0]).toMatchObject({ verdict: 'MISS' });
    expect(cacheChecks([result(10_000, 0.1)])[0]).toMatchObject({ verdict: 'SKIP' });
  });
});
