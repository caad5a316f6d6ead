import perfHooks from 'node:perf_hooks';
import { describe, expect, it, vi } from 'vitest';
import type { Deployment } from './config/snapshot.ts';
import { Metrics } from './metrics.ts';

const deployment = { name: 'd1', provider: 'openai', model: 'gpt-x' } as Deployment;

const values = async (m: Metrics, name: string) =>
  (await m.registry.getSingleMetric(name)!.get()).values.map((v) => ({ labels: v.labels, value: v.value }));

describe('hot-path counters kept as numbers until a scrape', () => {
  it('shows every increment at each read, with its labels, and keeps counting after a read', async () => {
    const m = new Metrics(false);
    m.answered('/v1/chat/completions', 200, 0.01);
    m.answered('/v1/chat/completions', 200, 0.01);
    m.answered('/v1/chat/completions', 429, undefined);
    expect(await values(m, 'gantry_requests_total')).toEqual([
      { labels: { route: '/v1/chat/completions', status: '200' }, value: 2 },
      { labels: { route: '/v1/chat/completions', status: '429' }, value: 1 },
    ]);
    m.answered('/v1/chat/completions', 200, 0.01);
    expect((await values(m, 'gantry_requests_total'))[0]!.value).toBe(3);
  });

  it('counts spend, tokens, attempts, failures, cache lookups and compressions in the text exposition', async () => {
    const m = new Metrics(false);
    m.charged('acme', 'gpt-x', 'openai', 0.0015, 10, 5);
    m.charged('acme', 'gpt-x', 'openai', 0.0015, 10, 0);
    m.attempt(deployment, 'success', 0.02);
    m.attempt(deployment, 'timeout', 1);
    m.cacheLookup('SKIP');
    m.compression('none', 'below_threshold');
    const text = await m.registry.metrics();
    expect(text).toContain(
      'gantry_spend_microdollars_total{tenant="acme",model="gpt-x",provider="openai"} 3000',
    );
    expect(text).toContain(
      'gantry_tokens_total{tenant="acme",model="gpt-x",provider="openai",kind="prompt"} 20',
    );
    expect(text).toContain(
      'gantry_tokens_total{tenant="acme",model="gpt-x",provider="openai",kind="completion"} 5',
    );
    expect(text).toContain(
      'gantry_upstream_attempts_total{deployment="d1",provider="openai",model="gpt-x",outcome="timeout"} 1',
    );
    expect(text).toContain(
      'gantry_upstream_failures_total{deployment="d1",provider="openai",model="gpt-x",kind="timeout"} 1',
    );
    expect(text).toContain(
      'gantry_upstream_attempt_duration_seconds_count{deployment="d1",provider="openai",model="gpt-x"} 1',
    );
    expect(text).toContain('gantry_cache_lookups_total{band="SKIP"} 1');
    expect(text).toContain('gantry_compression_requests_total{mode="none",reason="below_threshold"} 1');
  });

  it('refuses a value prom-client would refuse, at the caller', () => {
    const m = new Metrics(false);
    expect(() => m.charged('acme', 'gpt-x', 'openai', Number.POSITIVE_INFINITY, 0, 0)).toThrow(
      /not a valid number/,
    );
  });
});

describe('default process metrics', () => {
  it("samples the event loop at prom-client's 10 ms, so an idle loop reads a lag well under 100 ms", async () => {
    const monitor = vi.spyOn(perfHooks, 'monitorEventLoopDelay');
    try {
      const m = new Metrics();
      // The resolution dashboards on nodejs_eventloop_lag_* assume (prom-client's default).
      expect(monitor).toHaveBeenCalledWith({ resolution: 10 });
      const histogram = monitor.mock.results[0]?.value as perfHooks.IntervalHistogram;
      // Enough timer firings for a median; the loop is otherwise idle.
      await vi.waitFor(() => expect(histogram.count).toBeGreaterThanOrEqual(9), {
        timeout: 5000,
        interval: 20,
      });
      const text = await m.registry.metrics();
      const p50 = Number(/^nodejs_eventloop_lag_p50_seconds (\S+)$/m.exec(text)?.[1]);
      // Each sample is the time between firings: at 100 ms resolution the idle p50 is >= 0.1 s.
      expect(p50).toBeGreaterThan(0);
      expect(p50).toBeLessThan(0.05);
    } finally {
      monitor.mockRestore();
    }
  });
});
