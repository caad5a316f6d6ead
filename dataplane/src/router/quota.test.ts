/**
 * Deployment provider quotas (ModelDeployment rpm/tpm) in the router: the pure decisions, then
 * the router over the real in-process window store with a moved clock (no sleeps).
 */
import type { Capability } from '@gantry/crds';
import { beforeEach, describe, expect, it } from 'vitest';
import type { Deployment, ModelRoute, Snapshot } from '../config/snapshot.ts';
import { GatewayError } from '../errors.ts';
import { compile } from '../config/compile.ts';
import { parseManifests } from '../config/load.ts';
import { memoryDeploymentWindows, type DeploymentQuotaStore } from '../stores/deployment-quota.ts';
import { StoreUnavailableError } from '../stores/errors.ts';
import type { RateTicket } from '../stores/rate-limiter.ts';
import { HealthRegistry } from './health.ts';
import { limitsOf, quotaExhausted, verdictOf } from './quota.ts';
import { Router, type RouteRequest } from './router.ts';
import { UpstreamFailure } from './upstream.ts';
import type { UpstreamError } from '../providers/types.ts';
import { testDeployment, testTarget } from './testing.ts';

const dep = (name: string, priority: number, over: Partial<Deployment> = {}): Deployment =>
  testDeployment({
    name,
    model: 'm',
    priority,
    target: testTarget({ upstreamModel: name }),
    capabilities: new Set<Capability>(['chat']),
    ...over,
  });

function snapshot(deployments: Deployment[]): Snapshot {
  const route: ModelRoute = {
    model: 'm',
    deployments,
    fallbacks: [],
    capabilities: new Set<Capability>(['chat']),
    ownedBy: 'openai',
  };
  return {
    version: 1,
    source: 'test',
    loadedAt: new Date(0),
    models: new Map([['m', route]]),
    keys: new Map(),
    tenants: new Map(),
  };
}

describe('quota decisions', () => {
  it('a deployment without rpm or tpm has no quota', () => {
    expect(limitsOf(dep('a', 1))).toBeUndefined();
    expect(limitsOf(dep('a', 1, { rpm: 5 }))).toEqual({ rpm: 5, tpm: undefined });
    expect(limitsOf(dep('a', 1, { tpm: 900 }))).toEqual({ rpm: undefined, tpm: 900 });
  });

  it('a refused window is full with its wait; an admitted one goes with its ticket', () => {
    const ticket = { tenant: 'a', keyId: 'quota', id: 't', tokens: 3 };
    const base = { requests: undefined, tokens: undefined, tokensExceedLimit: false };
    expect(verdictOf({ ...base, allowed: true, retryAfterMs: 0, ticket })).toEqual({ kind: 'go', ticket });
    expect(verdictOf({ ...base, allowed: false, retryAfterMs: 4_200, ticket: undefined })).toEqual({
      kind: 'full',
      retryAfterMs: 4_200,
    });
  });

  it("the 429 names the deployments' provider quota and waits for the earliest reset", () => {
    const err = quotaExhausted('m', [42_001, 7_300, 59_000]);
    expect(err.status).toBe(429);
    expect(err.type).toBe('rate_limit_exceeded');
    expect(err.message).toMatch(/every deployment of m is at its provider quota/);
    expect(err.headers['retry-after']).toBe('8');
    expect(quotaExhausted('m', [0]).headers['retry-after']).toBe('1');
  });
});

describe('rpm and tpm in the config', () => {
  const manifest = (spec: string) =>
    `apiVersion: gantry.dev/v1alpha1\nkind: ModelDeployment\nmetadata: {name: d}\n` +
    `spec: {model: m, provider: openai, upstreamModel: u, apiKeyEnv: K, ${spec}}\n`;

  it('are compiled into the deployment', () => {
    const parsed = parseManifests(manifest('rpm: 2, tpm: 500'), 'gantry.yaml');
    expect(parsed.errors).toEqual([]);
    const result = compile(parsed.items, { env: { K: 'sk' }, version: 1, source: 'gantry.yaml' });
    if (!result.ok) throw new Error(result.errors.join('; '));
    const d = result.snapshot.models.get('m')!.deployments[0]!;
    expect(d.rpm).toBe(2);
    expect(d.tpm).toBe(500);
  });

  it('standalone YAML refuses what the CRD refuses', () => {
    expect(parseManifests(manifest('rpm: 0'), 'gantry.yaml').errors.join('\n')).toMatch(/rpm/);
    expect(parseManifests(manifest('tpm: 1.5'), 'gantry.yaml').errors.join('\n')).toMatch(/tpm/);
    expect(parseManifests(manifest('rpm: "10"'), 'gantry.yaml').errors.join('\n')).toMatch(/rpm/);
  });
});

describe('the router and deployment quotas', () => {
  let now: number;
  let health: HealthRegistry;
  let skips: string[];
  let storeFailures: string[];
  let logs: string[];

  beforeEach(() => {
    now = 1_000_000;
    // One failure would open a circuit: a skip counted as one would show at once.
    health = new HealthRegistry({ failureThreshold: 1, baseOpenMs: 10_000, maxOpenMs: 60_000 }, () => now);
    skips = [];
    storeFailures = [];
    logs = [];
  });

  const router = (quota: DeploymentQuotaStore) =>
    new Router({
      health,
      observer: {
        attempt: () => undefined,
        quotaSkipped: (d) => skips.push(d.name),
        quotaStoreFailed: (d) => storeFailures.push(d.name),
      },
      random: () => 0.5,
      now: () => now,
      quota,
      log: (_fields, message) => logs.push(message),
    });

  const request = (snap: Snapshot, tokens?: number): RouteRequest => ({
    model: 'm',
    snapshot: snap,
    allowed: () => true,
    needs: ['chat'],
    signal: new AbortController().signal,
    deadline: now + 30_000,
    tokens: tokens === undefined ? undefined : () => ({ prompt: tokens, output: 0 }),
  });

  const serve = (r: Router, snap: Snapshot, tokens?: number) =>
    r.execute(request(snap, tokens), async (d) => d.name);

  async function refusal(p: Promise<unknown>): Promise<GatewayError> {
    const err = await p.then(
      () => undefined,
      (e: unknown) => e,
    );
    if (!(err instanceof GatewayError)) throw new Error(`expected a GatewayError, got ${String(err)}`);
    return err;
  }

  it('rpm 2: two requests, then the next candidate; the skip is no failure', async () => {
    const a = dep('a', 1, { rpm: 2 });
    const b = dep('b', 2);
    const snap = snapshot([a, b]);
    const r = router(memoryDeploymentWindows(() => now));
    expect((await serve(r, snap)).value).toBe('a');
    expect((await serve(r, snap)).value).toBe('a');
    const third = await serve(r, snap);
    expect(third.value).toBe('b');
    expect(third.log).toEqual({ attempts: 1, failed: [] });
    expect(skips).toEqual(['a']);
    expect(health.circuitState('a')).toBe('closed');
    expect(health.availability(a)).toEqual({ ok: true });
    expect(health.view(a).inflight).toBe(0);
  });

  it('every deployment full: 429 with Retry-After from the earliest reset; the window slides', async () => {
    const a = dep('a', 1, { rpm: 1 });
    const b = dep('b', 1, { rpm: 1 });
    const snap = snapshot([a, b]);
    const r = router(memoryDeploymentWindows(() => now));
    await serve(r, snap);
    now += 20_000;
    await serve(r, snap);
    now += 5_000;
    const err = await refusal(serve(r, snap));
    expect(err.status).toBe(429);
    expect(err.message).toMatch(/provider quota/);
    // The first request leaves the window 60 s after it was taken: 35 s from now.
    expect(err.headers['retry-after']).toBe('35');
    expect(health.circuitState('a')).toBe('closed');
    expect(health.circuitState('b')).toBe('closed');
    now += 35_000;
    expect((await serve(r, snap)).value).toMatch(/^[ab]$/);
  });

  it('tpm counts the estimate: a request that does not fit goes elsewhere', async () => {
    const a = dep('a', 1, { tpm: 1_000 });
    const b = dep('b', 2);
    const snap = snapshot([a, b]);
    const r = router(memoryDeploymentWindows(() => now));
    expect((await serve(r, snap, 600)).value).toBe('a');
    expect((await serve(r, snap, 600)).value).toBe('b');
    expect((await serve(r, snap, 400)).value).toBe('a');
    expect(skips).toEqual(['a']);
  });

  it('an actual count corrects the estimate at settlement', async () => {
    const a = dep('a', 1, { tpm: 1_000 });
    const b = dep('b', 2);
    const snap = snapshot([a, b]);
    const windows = memoryDeploymentWindows(() => now);
    const r = router(windows);
    const tickets: [string, RateTicket][] = [];
    const first = await r.execute(
      { ...request(snap, 900), onQuotaTicket: (d, t) => tickets.push([d.name, t]) },
      async (d) => d.name,
    );
    expect(first.value).toBe('a');
    expect(tickets.map(([name, t]) => [name, t.tokens])).toEqual([['a', 900]]);
    await windows.adjust(tickets[0]![1], 100);
    expect((await serve(r, snap, 900)).value).toBe('a');
  });

  it('a failing quota store fails open: served, logged once, counted each time', async () => {
    const a = dep('a', 1, { rpm: 1 });
    const down: DeploymentQuotaStore = {
      take: () => Promise.reject(new StoreUnavailableError('redis down')),
      adjust: () => Promise.reject(new StoreUnavailableError('redis down')),
    };
    const r = router(down);
    for (let i = 0; i < 3; i++) expect((await serve(r, snapshot([a]))).value).toBe('a');
    expect(storeFailures).toEqual(['a', 'a', 'a']);
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatch(/deployment quota store unavailable/);
  });

  it('deployments without a quota never reach the store', async () => {
    const touched: string[] = [];
    const spy: DeploymentQuotaStore = {
      take: async (name) => {
        touched.push(name);
        throw new Error('unexpected');
      },
      adjust: async () => undefined,
    };
    expect((await serve(router(spy), snapshot([dep('a', 1)]))).value).toBe('a');
    expect(touched).toEqual([]);
  });

  describe('a failed attempt resolves its window entry', () => {
    const est = (prompt: number, output: number) => () => ({ prompt, output });
    const failing = (r: Router, snap: Snapshot, e: unknown) =>
      refusal(
        r.execute({ ...request(snap), tokens: est(100, 800) }, async () => {
          throw e;
        }),
      );
    const upstream = (over: Partial<UpstreamError>) =>
      new UpstreamFailure({ kind: 'bad_request', status: 400, message: 'nope', ...over });

    it("a caller's upstream 400 leaves nothing: the next request fits at once", async () => {
      const snap = snapshot([dep('a', 1, { tpm: 1_000 })]);
      const windows = memoryDeploymentWindows(() => now);
      const r = router(windows);
      expect((await failing(r, snap, upstream({}))).status).toBe(400);
      await Promise.resolve();
      expect((await serve(r, snap, 1_000)).value).toBe('a');
    });

    it("the gateway's own refusal (never sent) leaves nothing", async () => {
      const snap = snapshot([dep('a', 1, { tpm: 1_000 })]);
      const r = router(memoryDeploymentWindows(() => now));
      const err = await failing(r, snap, new GatewayError('invalid_request_error', 'cannot translate'));
      expect(err.status).toBe(400);
      await Promise.resolve();
      expect((await serve(r, snap, 1_000)).value).toBe('a');
    });

    it('an upstream 5xx keeps the prompt only', async () => {
      const snap = snapshot([dep('a', 1, { tpm: 1_000 })]);
      const r = router(memoryDeploymentWindows(() => now));
      await failing(r, snap, upstream({ kind: 'server', status: 500 }));
      await Promise.resolve();
      now += 11_000; // past the circuit the 5xx opened
      // 100 prompt tokens stay: 901 does not fit, 900 does.
      expect((await refusal(serve(r, snap, 901))).status).toBe(429);
      expect((await serve(r, snap, 900)).value).toBe('a');
    });

    it("the output bound is clamped to the deployment's maxOutputTokens", async () => {
      const snap = snapshot([dep('a', 1, { tpm: 1_000, maxOutputTokens: 300 })]);
      const tickets: RateTicket[] = [];
      const r = router(memoryDeploymentWindows(() => now));
      await r.execute(
        { ...request(snap), tokens: est(100, 99_950), onQuotaTicket: (_d, t) => tickets.push(t) },
        async (d) => d.name,
      );
      expect(tickets.map((t) => t.tokens)).toEqual([400]);
    });
  });

  it('a request above every tpm is a 413 without Retry-After, not a 429 for ever', async () => {
    const snap = snapshot([dep('a', 1, { tpm: 1_000 }), dep('b', 2, { tpm: 2_000 })]);
    const r = router(memoryDeploymentWindows(() => now));
    const err = await refusal(serve(r, snap, 5_000));
    expect(err.status).toBe(413);
    expect(err.type).toBe('request_too_large');
    expect(err.message).toMatch(/2000 tokens per minute/);
    expect(err.headers['retry-after']).toBeUndefined();
    // One that fits a window later still waits with a 429.
    await serve(r, snap, 1_000);
    await serve(r, snap, 2_000);
    expect((await refusal(serve(r, snap, 1_000))).status).toBe(429);
  });

  it('in process, windows of deployments gone from traffic (renamed on reload) are freed', async () => {
    const windows = memoryDeploymentWindows(() => now);
    for (let d = 0; d < 50; d++)
      for (let i = 0; i < 20; i++) await windows.take(`dep-${d}-v1`, { rpm: 100 }, 0);
    expect(windows.size).toBe(50);
    now += 30_000;
    // Still live: nothing is dropped.
    await windows.take('dep-0-v2', { rpm: 100 }, 0);
    expect(windows.size).toBe(51);
    now += 60_000;
    await windows.take('dep-0-v2', { rpm: 100 }, 0);
    expect(windows.size).toBe(1);
    // The live window is kept: its one entry fills an rpm of 1.
    expect((await windows.take('dep-0-v2', { rpm: 1 }, 0)).allowed).toBe(false);
  });
});
