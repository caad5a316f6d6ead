import { describe, expect, it } from 'vitest';
import { createBuiltinEmbedder } from '../../dataplane/src/pipeline/cache/builtin-embedder.ts';
import { embedForCache } from '../../dataplane/src/pipeline/cache/embedder.ts';
import { DEFAULT_THRESHOLDS, resolveCachePolicy } from '../../dataplane/src/pipeline/cache/policy.ts';
import { dualScore } from '../../dataplane/src/pipeline/cache/score.ts';
import {
  cacheE2eBody,
  cacheE2eChecks,
  cacheE2eConfig,
  cacheE2eTables,
  exactVsSemantic,
  hitVsMiss,
  questionMaker,
  readCacheE2eSettings,
  semanticTwin,
  statusOf,
  statusProblem,
  windowSchedule,
  type CacheE2eCell,
  type Mode,
} from './cache-e2e.ts';

const cell = (mode: Mode, p50: number, ttfb = NaN, cpu = p50 / 2): CacheE2eCell => ({
  mode,
  stats: { requests: 100, errors: 0, rps: 1000 / p50, p50, p99: p50 * 2, ttfbP50: ttfb, ttfbP99: ttfb * 2 },
  gatewayCpuMs: cpu,
  statuses: { [mode === 'miss' ? 'MISS' : 'DIRECT']: 100 },
});

describe('cache-e2e settings and config', () => {
  it('reads BENCH_CACHEE2E_SECONDS, 3 by default', () => {
    expect(readCacheE2eSettings({}).seconds).toBe(3);
    expect(readCacheE2eSettings({ BENCH_CACHEE2E_SECONDS: '0.5' }).seconds).toBe(0.5);
    expect(() => readCacheE2eSettings({ BENCH_CACHEE2E_SECONDS: 'x' })).toThrow(/BENCH_CACHEE2E_SECONDS/);
  });

  it('reads BENCH_CACHEE2E_ROUNDS, 3 by default, and alternates exact and semantic hit windows', () => {
    expect(readCacheE2eSettings({}).rounds).toBe(3);
    expect(readCacheE2eSettings({ BENCH_CACHEE2E_ROUNDS: '1' }).rounds).toBe(1);
    expect(() => readCacheE2eSettings({ BENCH_CACHEE2E_ROUNDS: '1.5' })).toThrow(/BENCH_CACHEE2E_ROUNDS/);
    expect(windowSchedule(2)).toEqual(['miss', 'hit', 'hit-semantic', 'hit', 'hit-semantic', 'hit-stream']);
  });

  it('makes the semantic twin a different text of the same words', () => {
    expect(semanticTwin('What is 2 + 2?')).not.toBe('What is 2 + 2?');
    expect(semanticTwin('What is 2 + 2?').trim()).toBe('What is 2 + 2?');
  });

  it('turns the cache on for the tenant and sets no CachePolicy', () => {
    const yaml = cacheE2eConfig('http://127.0.0.1:1');
    expect(yaml).toContain('"cache":{"enabled":true}');
    expect(yaml).not.toContain('CachePolicy');
  });

  it('asks for a stream only in stream mode', () => {
    expect(JSON.parse(cacheE2eBody('q', true).toString())).toMatchObject({ stream: true });
    expect(JSON.parse(cacheE2eBody('q', false).toString())).not.toHaveProperty('stream');
  });
});

describe('miss questions', () => {
  it('never repeat and never land in a hit band of one another with the builtin embedder', async () => {
    const next = questionMaker(5);
    const questions = Array.from({ length: 60 }, next);
    expect(new Set(questions).size).toBe(questions.length);
    const embedder = createBuiltinEmbedder();
    const policy = resolveCachePolicy(undefined);
    const vectors = await Promise.all(
      questions.map((query) => embedForCache(embedder, { query, context: '' })),
    );
    let best = 0;
    for (let i = 0; i < vectors.length; i++) {
      for (let j = i + 1; j < vectors.length; j++) {
        const a = vectors[i]!;
        const b = vectors[j]!;
        best = Math.max(best, dualScore(a.query, b.query, a.context, b.context, policy.alpha, policy.beta));
      }
    }
    expect(best).toBeLessThan(DEFAULT_THRESHOLDS.tweak);
  });
});

describe('cache status counting', () => {
  it('reads the status header, or says why there is none', () => {
    expect(statusOf(200, { 'x-gantrycache-status': 'DIRECT' })).toBe('DIRECT');
    expect(statusOf(200, {})).toBe('none');
    expect(statusOf(502, { 'x-gantrycache-status': 'MISS' })).toBe('HTTP 502');
  });

  it('accepts only the expected status for a mode', () => {
    expect(statusProblem('hit', { DIRECT: 10 })).toBeUndefined();
    expect(statusProblem('hit-stream', { DIRECT: 10 })).toBeUndefined();
    expect(statusProblem('hit-semantic', { DIRECT: 10 })).toBeUndefined();
    expect(statusProblem('hit-semantic', { MISS: 10 })).toMatch(/DIRECT/);
    expect(statusProblem('miss', { MISS: 10 })).toBeUndefined();
    expect(statusProblem('hit', { DIRECT: 9, MISS: 1 })).toMatch(/DIRECT 9, MISS 1/);
    expect(statusProblem('hit', { DIRECT: 9, none: 1 })).toMatch(/none 1/);
    expect(statusProblem('miss', { MISS: 9, REUSE: 1 })).toMatch(
      /expected every x-gantrycache-status to be MISS/,
    );
    expect(statusProblem('hit', {})).toMatch(/no answer/);
  });
});

describe('hit against miss', () => {
  const cells = [cell('miss', 2), cell('hit', 0.5), cell('hit-stream', 0.8, 0.4)];

  it('reports ratios and the time a hit saves', () => {
    const r = hitVsMiss(cells);
    expect(r.p50Ratio).toBeCloseTo(0.25);
    expect(r.p99Ratio).toBeCloseTo(0.25);
    expect(r.savedP50Ms).toBeCloseTo(1.5);
    expect(r.streamP50Ratio).toBeCloseTo(0.4);
    expect(r.streamTtfbRatio).toBeCloseTo(0.2);
    expect(hitVsMiss([cell('hit', 1)]).p50Ratio).toBeNaN();
  });

  it('passes when the hit p50 is below the miss p50, and only then', () => {
    expect(cacheE2eChecks(cells)[0]!.verdict).toBe('PASS');
    expect(cacheE2eChecks([cell('miss', 1), cell('hit', 1.2)])[0]!.verdict).toBe('MISS');
    expect(cacheE2eChecks([cell('hit', 1)])[0]).toMatchObject({ verdict: 'MISS', actual: 'not measured' });
  });

  it('tables every window, the exact-against-semantic row and one ratio row', () => {
    const windows = [
      cell('miss', 2),
      cell('hit', 0.5, NaN, 0.3),
      cell('hit-semantic', 4, NaN, 3.9),
      cell('hit', 0.6, NaN, 0.5),
      cell('hit-semantic', 4.2, NaN, 4.1),
      cell('hit-stream', 0.8, 0.4),
    ];
    const [modes, tiers, ratios] = cacheE2eTables(windows);
    expect(modes!.rows.map((r) => r[0])).toEqual([
      'miss',
      'hit #1',
      'hit-semantic #1',
      'hit #2',
      'hit-semantic #2',
      'hit-stream',
    ]);
    expect(modes!.rows[1]).toContain('DIRECT 100');
    expect(tiers!.rows[0]!.slice(0, 3)).toEqual(['0.400', '4.000', '3.600']);
    expect(ratios!.rows[0]![0]).toBe('0.25x');
  });

  it('compares the tiers by the median of their windows', () => {
    const e = exactVsSemantic([
      cell('hit', 1, NaN, 0.2),
      cell('hit-semantic', 5, NaN, 4),
      cell('hit', 1, NaN, 0.9),
      cell('hit-semantic', 5, NaN, 3),
      cell('hit', 1, NaN, 0.3),
      cell('hit-semantic', 5, NaN, 9),
    ]);
    expect(e).toMatchObject({ exactCpuMs: 0.3, semanticCpuMs: 4, cpuSavedMs: 3.7, windows: 3 });
    expect(exactVsSemantic([cell('hit', 1)]).semanticCpuMs).toBeNaN();
  });
});
