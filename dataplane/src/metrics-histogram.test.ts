import { Histogram, Registry, openMetricsContentType, type OpenMetricsContentType } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { LiveHistogram } from './metrics-histogram.ts';

const config = {
  name: 'gantry_test_duration_seconds',
  help: 'A test histogram, by route and model',
  labelNames: ['route', 'model'] as const,
  buckets: [0.005, 0.01, 0.5, 1, 30],
};

/** The same observations into a prom-client Histogram and a LiveHistogram, each in its own registry. */
function twins(observations: readonly (readonly [string, string, number])[]) {
  const promRegistry = new Registry();
  const liveRegistry = new Registry();
  const prom = new Histogram({ ...config, registers: [promRegistry] });
  const live = new LiveHistogram({ ...config, registers: [liveRegistry] });
  for (const [route, model, seconds] of observations) {
    prom.labels({ route, model }).observe(seconds);
    const key = `${route}\u0000${model}`;
    (live.find(key) ?? live.child(key, { route, model })).observe(seconds);
  }
  return { promRegistry, liveRegistry, prom, live };
}

// Values on bounds, between them, above the last one, zero, and label values the exposition escapes.
const observations = [
  ['/v1/chat/completions', 'gpt-x', 0.004],
  ['/v1/chat/completions', 'gpt-x', 0.01],
  ['/v1/embeddings', 'emb "quoted" \\ back\nline', 45],
  ['/v1/chat/completions', 'gpt-x', 0.2],
  ['/v1/chat/completions', 'other', 0],
  ['/v1/embeddings', 'emb "quoted" \\ back\nline', 0.1 + 0.2],
  ['/v1/chat/completions', 'gpt-x', 30],
  ['/v1/chat/completions', 'gpt-x', 1e-9],
] as const;

describe('LiveHistogram exports what prom-client would', () => {
  it('prints the same text exposition as a prom-client Histogram for the same observations', async () => {
    const { promRegistry, liveRegistry } = twins(observations);
    const text = await liveRegistry.metrics();
    expect(text).toBe(await promRegistry.metrics());
    expect(text).toContain(
      'gantry_test_duration_seconds_bucket{le="0.01",route="/v1/chat/completions",model="gpt-x"} 3',
    );
    expect(text).toContain(
      'gantry_test_duration_seconds_count{route="/v1/chat/completions",model="other"} 1',
    );
  });

  it('prints the same OpenMetrics text too', async () => {
    const { prom, live } = twins(observations);
    const a = new Registry<OpenMetricsContentType>();
    const b = new Registry<OpenMetricsContentType>();
    a.setContentType(openMetricsContentType);
    b.setContentType(openMetricsContentType);
    a.registerMetric(prom);
    b.registerMetric(live as unknown as Histogram);
    expect(await b.metrics()).toBe(await a.metrics());
  });

  it('gives the same get() and JSON as prom-client, and nothing for a set never observed', async () => {
    const { promRegistry, liveRegistry, prom, live } = twins(observations);
    live.child('unused', { route: '/v1/models', model: 'none' });
    expect(await live.get()).toEqual(await prom.get());
    expect(await liveRegistry.getMetricsAsJSON()).toEqual(await promRegistry.getMetricsAsJSON());
  });

  it('keeps counting on the same series after a reset, as prom-client does after its own', async () => {
    const { promRegistry, liveRegistry, prom, live } = twins(observations);
    promRegistry.resetMetrics();
    liveRegistry.resetMetrics();
    expect(await liveRegistry.metrics()).toBe(await promRegistry.metrics());
    prom.labels({ route: '/v1/chat/completions', model: 'gpt-x' }).observe(0.7);
    live.find('/v1/chat/completions\u0000gpt-x')!.observe(0.7);
    expect(await liveRegistry.metrics()).toBe(await promRegistry.metrics());
  });

  it('prints series in the order they are observed after a reset, as prom-client does', async () => {
    const { promRegistry, liveRegistry, prom, live } = twins(observations);
    promRegistry.resetMetrics();
    liveRegistry.resetMetrics();
    // Observed first before the reset: gpt-x, embeddings, other. Now other, a new set, gpt-x.
    const again = [
      ['/v1/chat/completions', 'other', 0.3],
      ['/v1/models', 'new', 2],
      ['/v1/chat/completions', 'gpt-x', 0.02],
      ['/v1/chat/completions', 'other', 0.001],
    ] as const;
    for (const [route, model, seconds] of again) {
      prom.labels({ route, model }).observe(seconds);
      const key = `${route}\u0000${model}`;
      (live.find(key) ?? live.child(key, { route, model })).observe(seconds);
    }
    const text = await liveRegistry.metrics();
    expect(text).toBe(await promRegistry.metrics());
    const counts = text.split('\n').filter((l) => l.startsWith('gantry_test_duration_seconds_count'));
    expect(counts).toEqual([
      'gantry_test_duration_seconds_count{route="/v1/chat/completions",model="other"} 2',
      'gantry_test_duration_seconds_count{route="/v1/models",model="new"} 1',
      'gantry_test_duration_seconds_count{route="/v1/chat/completions",model="gpt-x"} 1',
    ]);
    expect(await live.get()).toEqual(await prom.get());
  });

  it('orders by first observation, not by when a series was made', async () => {
    const { promRegistry, liveRegistry, prom, live } = twins([]);
    const early = live.child('early', { route: '/a', model: 'm' });
    expect(() => early.observe(Number.NaN)).toThrow(/not a valid number/);
    live.child('late', { route: '/b', model: 'm' }).observe(1);
    early.observe(2);
    prom.labels({ route: '/b', model: 'm' }).observe(1);
    prom.labels({ route: '/a', model: 'm' }).observe(2);
    expect(await liveRegistry.metrics()).toBe(await promRegistry.metrics());
  });

  it('prints an unlabelled histogram as prom-client does: zero buckets at first, none after a reset', async () => {
    const promRegistry = new Registry();
    const liveRegistry = new Registry();
    const unlabelled = { ...config, labelNames: [] as const };
    const prom = new Histogram({ ...unlabelled, registers: [promRegistry] });
    const live = new LiveHistogram({ ...unlabelled, registers: [liveRegistry] });
    const fresh = await liveRegistry.metrics();
    expect(fresh).toBe(await promRegistry.metrics());
    expect(fresh).toContain('gantry_test_duration_seconds_bucket{le="+Inf"} 0');
    // Any key names the one series.
    prom.observe(0.2);
    live.child('any', {}).observe(0.2);
    expect(live.find('')).toBe(live.find('any'));
    expect(await liveRegistry.metrics()).toBe(await promRegistry.metrics());
    promRegistry.resetMetrics();
    liveRegistry.resetMetrics();
    const reset = await liveRegistry.metrics();
    expect(reset).toBe(await promRegistry.metrics());
    expect(reset).not.toContain('_bucket');
    prom.observe(40);
    live.find('any')!.observe(40);
    expect(await liveRegistry.metrics()).toBe(await promRegistry.metrics());
    expect(await live.get()).toEqual(await prom.get());
  });

  it('refuses what prom-client refuses: a value that is not a number, an unknown label, le, a bad name', () => {
    const live = new LiveHistogram({ ...config, registers: [] });
    const series = live.child('k', { route: 'r', model: 'm' });
    expect(() => series.observe(Number.NaN)).toThrow(/not a valid number/);
    expect(() => live.child('x', { route: 'r', model: 'm', tenant: 't' } as never)).toThrow(/tenant/);
    expect(() => new LiveHistogram({ ...config, labelNames: ['le'], registers: [] })).toThrow(/reserved/);
    expect(() => new LiveHistogram({ ...config, name: 'bad name', registers: [] })).toThrow(
      /Invalid metric name/,
    );
    expect(() => new LiveHistogram({ ...config, buckets: [1, 0.5], registers: [] })).toThrow(/ascending/);
  });
});
