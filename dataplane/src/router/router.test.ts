import type { Capability } from '@gantry/crds';
import { beforeEach, describe, expect, it } from 'vitest';
import type { Deployment, ModelRoute, Snapshot } from '../config/snapshot.ts';
import { ResponseHeaders } from '../brand.ts';
import { GatewayError } from '../errors.ts';
import type { UpstreamError, UpstreamErrorKind } from '../providers/types.ts';
import type { ClientSignal } from './client-signal.ts';
import type { BreakerConfig } from './breaker.ts';
import { HealthRegistry } from './health.ts';
import { DEFAULT_RETRY, type RetryConfig } from './policy.ts';
import { attemptHeaders, Router, type RouteRequest, type RouterObserver } from './router.ts';
import { claimed, testDeployment, testTarget } from './testing.ts';
import { ClientAbortError, UpstreamFailure } from './upstream.ts';

// ---------------------------------------------------------------------------------------
// Fixtures: deployments with distinct priorities so the failover order is deterministic.

const dep = (name: string, model: string, priority: number, over: Partial<Deployment> = {}): Deployment =>
  testDeployment({
    name,
    model,
    priority,
    target: testTarget({ upstreamModel: model }),
    capabilities: new Set<Capability>(['chat', 'streaming']),
    ...over,
  });

function snapshot(routes: { model: string; deployments: Deployment[]; fallbacks?: string[] }[]): Snapshot {
  const models = new Map<string, ModelRoute>();
  for (const r of routes) {
    const capabilities = new Set<Capability>();
    for (const d of r.deployments) for (const c of d.capabilities) capabilities.add(c);
    models.set(r.model, {
      model: r.model,
      deployments: r.deployments,
      fallbacks: r.fallbacks ?? [],
      capabilities,
      ownedBy: 'openai',
    });
  }
  return { version: 1, source: 'test', loadedAt: new Date(0), models, keys: new Map(), tenants: new Map() };
}

const failure = (
  kind: UpstreamErrorKind,
  retryAfterMs?: number,
  message = `${kind} happened`,
): UpstreamFailure =>
  new UpstreamFailure({ kind, status: kind === 'rate_limited' ? 429 : 500, message, retryAfterMs });

type Outcome = string | Error;

/** A fake attempt: per deployment name, a queue of outcomes (a string is the value, an Error is thrown). */
function script(plan: Record<string, Outcome[]>) {
  const calls: string[] = [];
  const attempt = async (d: Deployment): Promise<string> => {
    calls.push(d.name);
    const outcome = plan[d.name]?.shift();
    if (outcome === undefined) throw new Error(`test: no outcome left for ${d.name}`);
    if (outcome instanceof Error) throw outcome;
    return outcome;
  };
  return { calls, attempt };
}

// ---------------------------------------------------------------------------------------
// Router with an injected clock, sleep and randomness.

let now: number;
let sleeps: number[];
let observed: { name: string; outcome: string; seconds: number }[];
let health: HealthRegistry;

const breakerCfg: BreakerConfig = { failureThreshold: 3, baseOpenMs: 10_000, maxOpenMs: 60_000 };

function makeRouter(
  retry: RetryConfig = DEFAULT_RETRY,
  sleep?: (ms: number, s: ClientSignal) => Promise<void>,
) {
  const observer: RouterObserver = {
    attempt: (d, outcome, seconds) => observed.push({ name: d.name, outcome, seconds }),
  };
  return new Router({
    health,
    observer,
    retry,
    random: () => 0.5,
    now: () => now,
    sleep:
      sleep ??
      (async (ms) => {
        sleeps.push(ms);
        now += ms;
      }),
  });
}

function request(snap: Snapshot, model: string, over: Partial<RouteRequest> = {}): RouteRequest {
  return {
    model,
    snapshot: snap,
    allowed: () => true,
    needs: ['chat'],
    signal: new AbortController().signal,
    deadline: now + 30_000,
    ...over,
  };
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

async function gatewayError(p: Promise<unknown>): Promise<GatewayError> {
  const err = await rejection(p);
  expect(err).toBeInstanceOf(GatewayError);
  return err as GatewayError;
}

const inflight = (d: Deployment) => health.view(d).inflight;

beforeEach(() => {
  now = 1_000_000;
  sleeps = [];
  observed = [];
  health = new HealthRegistry(breakerCfg, () => now);
});

// ---------------------------------------------------------------------------------------

describe('success and failover order', () => {
  const a = dep('a', 'm', 1);
  const b = dep('b', 'm', 2);
  const c = dep('c', 'm', 3);
  const snap = snapshot([{ model: 'm', deployments: [c, a, b] }]);

  it('first deployment answers: one attempt, nothing failed, health settled', async () => {
    const { calls, attempt } = script({ a: ['A'] });
    const routed = await makeRouter().execute(request(snap, 'm'), attempt);
    expect(routed.value).toBe('A');
    expect(routed.deployment).toBe(a);
    expect(routed.log).toEqual({ attempts: 1, failed: [] });
    expect(calls).toEqual(['a']);
    expect(inflight(a)).toBe(0);
    expect(observed).toEqual([{ name: 'a', outcome: 'success', seconds: 0 }]);
  });

  it('fails over in priority order and reports every failed deployment once', async () => {
    const { calls, attempt } = script({ a: [failure('server')], b: [failure('overloaded')], c: ['C'] });
    const routed = await makeRouter().execute(request(snap, 'm'), attempt);
    expect(calls).toEqual(['a', 'b', 'c']);
    expect(routed.value).toBe('C');
    expect(routed.deployment.name).toBe('c');
    expect(routed.log).toEqual({ attempts: 3, failed: ['a', 'b'] });
    expect(observed.map((o) => [o.name, o.outcome])).toEqual([
      ['a', 'server'],
      ['b', 'overloaded'],
      ['c', 'success'],
    ]);
    expect(sleeps).toEqual([]);
    for (const d of [a, b, c]) expect(inflight(d)).toBe(0);
  });

  it('fails over on network, timeout, auth and not_found faults', async () => {
    for (const kind of ['network', 'timeout', 'auth', 'not_found'] as const) {
      health = new HealthRegistry(breakerCfg, () => now);
      const { calls, attempt } = script({ a: [failure(kind)], b: ['B'] });
      const routed = await makeRouter().execute(request(snap, 'm'), attempt);
      expect(calls, kind).toEqual(['a', 'b']);
      expect(routed.value).toBe('B');
    }
  });

  it('goes on to the fallback models after the model’s own deployments, in their order', async () => {
    const f1 = dep('f1', 'fb1', 1);
    const f2 = dep('f2', 'fb2', 1);
    const s = snapshot([
      { model: 'm', deployments: [a, b], fallbacks: ['fb1', 'fb2'] },
      { model: 'fb1', deployments: [f1] },
      { model: 'fb2', deployments: [f2] },
    ]);
    const { calls, attempt } = script({
      a: [failure('server')],
      b: [failure('server')],
      f1: [failure('server')],
      f2: ['F2'],
    });
    const routed = await makeRouter().execute(request(s, 'm'), attempt);
    expect(calls).toEqual(['a', 'b', 'f1', 'f2']);
    expect(routed.deployment).toBe(f2);
    expect(routed.log).toEqual({ attempts: 4, failed: ['a', 'b', 'f1'] });
  });

  it('a model listing itself as fallback is not tried twice', async () => {
    const s = snapshot([{ model: 'm', deployments: [a], fallbacks: ['m'] }]);
    const { calls, attempt } = script({ a: [failure('timeout')] });
    await gatewayError(makeRouter().execute(request(s, 'm'), attempt));
    expect(calls).toEqual(['a']);
  });

  it('fallback models the allowed predicate rejects are never attempted', async () => {
    const x = dep('x', 'secret', 1);
    const y = dep('y', 'open', 1);
    const s = snapshot([
      { model: 'm', deployments: [a], fallbacks: ['secret', 'open'] },
      { model: 'secret', deployments: [x] },
      { model: 'open', deployments: [y] },
    ]);
    const asked: string[] = [];
    const allowed = (model: string) => {
      asked.push(model);
      return model !== 'secret';
    };
    const { calls, attempt } = script({ a: [failure('server')], x: ['X'], y: ['Y'] });
    const routed = await makeRouter().execute(request(s, 'm', { allowed }), attempt);
    expect(calls).toEqual(['a', 'y']);
    expect(routed.value).toBe('Y');
    expect(asked).toContain('secret');

    // With the only permitted candidate failing, `a` is retried in place; `x` is still never tried.
    const only = script({ a: [failure('server'), failure('server'), failure('server')], x: ['X'] });
    const s2 = snapshot([
      { model: 'm', deployments: [a], fallbacks: ['secret'] },
      { model: 'secret', deployments: [x] },
    ]);
    health = new HealthRegistry(breakerCfg, () => now);
    const err = await gatewayError(makeRouter().execute(request(s2, 'm', { allowed }), only.attempt));
    expect(only.calls).toEqual(['a', 'a', 'a']);
    expect(err.status).toBe(502);
  });

  it('deployments lacking a needed capability, or refused by the filter, are not candidates', async () => {
    const plain = dep('plain', 'v', 1);
    const vision = dep('vision', 'v', 2, { capabilities: new Set<Capability>(['chat', 'vision']) });
    const vision2 = dep('vision2', 'v', 3, { capabilities: new Set<Capability>(['chat', 'vision']) });
    const s = snapshot([{ model: 'v', deployments: [plain, vision, vision2] }]);
    const first = script({ vision: ['V'] });
    await makeRouter().execute(request(s, 'v', { needs: ['chat', 'vision'] }), first.attempt);
    expect(first.calls).toEqual(['vision']);

    const second = script({ vision2: ['V2'] });
    await makeRouter().execute(
      request(s, 'v', { needs: ['chat', 'vision'], filter: (d) => d.name !== 'vision' }),
      second.attempt,
    );
    expect(second.calls).toEqual(['vision2']);
  });
});

describe('attempts are bounded', () => {
  it('stops after maxAttempts even with more deployments left', async () => {
    const ds = ['d1', 'd2', 'd3', 'd4', 'd5', 'd6', 'd7'].map((n, i) => dep(n, 'm', i + 1));
    const s = snapshot([{ model: 'm', deployments: ds }]);
    const { calls, attempt } = script(Object.fromEntries(ds.map((d) => [d.name, [failure('server')]])));
    const err = await gatewayError(makeRouter().execute(request(s, 'm'), attempt));
    expect(calls).toEqual(['d1', 'd2', 'd3', 'd4', 'd5']);
    expect(err.status).toBe(502);
    expect(err.type).toBe('upstream_error');
    expect(err.message).toContain('d5');
    expect(err.headers['x-gantry-attempts']).toBe('5');
    expect(err.headers['x-gantry-failed']).toBe('d1,d2,d3,d4,d5');
  });

  it('counts retries of the same deployment against the bound', async () => {
    const a = dep('a', 'm', 1);
    const s = snapshot([{ model: 'm', deployments: [a] }]);
    const { calls, attempt } = script({ a: [failure('server'), failure('server'), failure('server')] });
    const retry = { ...DEFAULT_RETRY, maxAttempts: 2, maxSameRetries: 10 };
    await gatewayError(makeRouter(retry).execute(request(s, 'm'), attempt));
    expect(calls).toEqual(['a', 'a']);
    expect(sleeps).toHaveLength(1);
  });
});

describe('retrying the same deployment', () => {
  const a = dep('a', 'm', 1);
  const snap = snapshot([{ model: 'm', deployments: [a] }]);

  it('only deployment, transient faults: retried with jittered, growing backoff; failed listed once', async () => {
    const { calls, attempt } = script({ a: [failure('server'), failure('network'), 'A'] });
    const routed = await makeRouter().execute(request(snap, 'm'), attempt);
    expect(calls).toEqual(['a', 'a', 'a']);
    // random 0.5: retry 0 → max(base/2, 0.5·100) = 50; retry 1 → 0.5·200 = 100
    expect(sleeps).toEqual([50, 100]);
    expect(routed.log).toEqual({ attempts: 3, failed: ['a'] });
    expect(inflight(a)).toBe(0);
  });

  it('gives up after maxSameRetries retries', async () => {
    const { calls, attempt } = script({
      a: [failure('overloaded'), failure('overloaded'), failure('overloaded'), 'A'],
    });
    const err = await gatewayError(makeRouter().execute(request(snap, 'm'), attempt));
    expect(calls).toEqual(['a', 'a', 'a']);
    expect(sleeps).toHaveLength(DEFAULT_RETRY.maxSameRetries);
    // Still busy after the retries: the caller hears "busy" (503), not a broken answer (502).
    expect(err.status).toBe(503);
    expect(err.headers['x-gantry-attempts']).toBe('3');
    expect(err.headers['x-gantry-failed']).toBe('a');
  });

  it('a timeout on the only deployment is not retried (a silent deployment is never hammered)', async () => {
    const { calls, attempt } = script({ a: [failure('timeout'), 'A'] });
    const err = await gatewayError(makeRouter().execute(request(snap, 'm'), attempt));
    expect(calls).toEqual(['a']);
    expect(sleeps).toEqual([]);
    expect(err.status).toBe(504);
    expect(err.type).toBe('upstream_timeout');
    expect(err.headers['x-gantry-attempts']).toBeUndefined();
    expect(err.headers['x-gantry-failed']).toBe('a');
  });

  it('stops retrying when the breaker opens meanwhile', async () => {
    const retry = { ...DEFAULT_RETRY, maxSameRetries: 10 };
    const { calls, attempt } = script({ a: [failure('server'), failure('server'), failure('server'), 'A'] });
    const err = await gatewayError(makeRouter(retry).execute(request(snap, 'm'), attempt));
    expect(calls).toEqual(['a', 'a', 'a']);
    expect(err.status).toBe(502);
    expect(health.circuitState('a')).toBe('open');
  });

  it('an abort during the backoff sleep ends the request as a client abort', async () => {
    const router = makeRouter(DEFAULT_RETRY, async () => {
      throw new ClientAbortError();
    });
    const { calls, attempt } = script({ a: [failure('server'), 'A'] });
    await expect(router.execute(request(snap, 'm'), attempt)).rejects.toBeInstanceOf(ClientAbortError);
    expect(calls).toEqual(['a']);
    expect(inflight(a)).toBe(0);
  });

  it('the default sleep is abortable', async () => {
    const router = new Router({
      health,
      observer: { attempt: () => undefined },
      random: () => 0.5,
      now: () => now,
    });
    const ctl = new AbortController();
    const { attempt } = script({ a: [failure('server'), 'A'] });
    const p = router.execute(request(snap, 'm', { signal: ctl.signal }), attempt);
    setTimeout(() => ctl.abort(), 5);
    await expect(p).rejects.toBeInstanceOf(ClientAbortError);
  });
});

describe('429 and Retry-After', () => {
  const a = dep('a', 'm', 1);
  const b = dep('b', 'm', 2);

  it('waits out a Retry-After that fits when no alternative exists', async () => {
    const s = snapshot([{ model: 'm', deployments: [a] }]);
    const { calls, attempt } = script({ a: [failure('rate_limited', 1_500), 'A'] });
    const routed = await makeRouter().execute(request(s, 'm'), attempt);
    expect(sleeps).toEqual([1_500]);
    expect(calls).toEqual(['a', 'a']);
    expect(routed.log).toEqual({ attempts: 2, failed: ['a'] });
    expect(health.circuitState('a')).toBe('closed');
  });

  it('fails over at once when an alternative exists, and cools the limited deployment down', async () => {
    const s = snapshot([{ model: 'm', deployments: [a, b] }]);
    const { calls, attempt } = script({ a: [failure('rate_limited', 1_500)], b: ['B'] });
    const routed = await makeRouter().execute(request(s, 'm'), attempt);
    expect(calls).toEqual(['a', 'b']);
    expect(sleeps).toEqual([]);
    expect(routed.value).toBe('B');
    expect(health.availability(a)).toEqual({ ok: false, until: now + 1_500, reason: 'cooldown' });

    // The next request does not even try the cooled-down deployment.
    const next = script({ b: ['B'] });
    await makeRouter().execute(request(s, 'm'), next.attempt);
    expect(next.calls).toEqual(['b']);
  });

  it('a Retry-After beyond the request deadline is not waited: 429 with the provider’s retry-after', async () => {
    const s = snapshot([{ model: 'm', deployments: [a] }]);
    const { calls, attempt } = script({ a: [failure('rate_limited', 4_200, 'slow down')] });
    const err = await gatewayError(makeRouter().execute(request(s, 'm', { deadline: now + 3_000 }), attempt));
    expect(calls).toEqual(['a']);
    expect(sleeps).toEqual([]);
    expect(err.status).toBe(429);
    expect(err.type).toBe('rate_limit_exceeded');
    expect(err.message).toContain('slow down');
    expect(err.headers['retry-after']).toBe('5');
  });

  it('a Retry-After above maxRetryAfterMs is not waited even with time left', async () => {
    const s = snapshot([{ model: 'm', deployments: [a] }]);
    const { calls, attempt } = script({
      a: [failure('rate_limited', DEFAULT_RETRY.maxRetryAfterMs + 1), 'A'],
    });
    const err = await gatewayError(
      makeRouter().execute(request(s, 'm', { deadline: now + 600_000 }), attempt),
    );
    expect(calls).toEqual(['a']);
    expect(err.status).toBe(429);
  });

  it('429 without Retry-After backs off with jitter before retrying the only deployment', async () => {
    const s = snapshot([{ model: 'm', deployments: [a] }]);
    const { calls, attempt } = script({ a: [failure('rate_limited'), 'A'] });
    await makeRouter().execute(request(s, 'm'), attempt);
    expect(calls).toEqual(['a', 'a']);
    expect(sleeps).toEqual([50]);
    expect(sleeps[0]).toBeGreaterThan(0);
  });
});

describe('context length', () => {
  const a = dep('a', 'm', 1, { contextWindow: 8_000 });
  const b = dep('b', 'm', 2, { contextWindow: 8_000 });
  const small = dep('small', 'mini', 1, { contextWindow: 4_000 });
  const big = dep('big', 'large', 1, { contextWindow: 128_000 });

  it('jumps to a fallback model with a larger window, skipping same-model deployments and smaller ones', async () => {
    const s = snapshot([
      { model: 'm', deployments: [a, b], fallbacks: ['mini', 'large'] },
      { model: 'mini', deployments: [small] },
      { model: 'large', deployments: [big] },
    ]);
    const { calls, attempt } = script({
      a: [failure('context_length')],
      b: ['B'],
      small: ['S'],
      big: ['BIG'],
    });
    const routed = await makeRouter().execute(request(s, 'm'), attempt);
    expect(calls).toEqual(['a', 'big']);
    expect(routed.deployment).toBe(big);
    expect(routed.log).toEqual({ attempts: 2, failed: ['a'] });
    // Not the deployment's fault.
    expect(health.circuitState('a')).toBe('closed');
    expect(inflight(a)).toBe(0);
  });

  it('never retries the same model elsewhere, even on a deployment with a larger or unknown window', async () => {
    const roomy = dep('roomy', 'm', 2, { contextWindow: 1_000_000 });
    const unsure = dep('unsure', 'm', 3);
    const s = snapshot([
      { model: 'm', deployments: [a, roomy, unsure], fallbacks: ['large'] },
      { model: 'large', deployments: [big] },
    ]);
    const { calls, attempt } = script({
      a: [failure('context_length')],
      roomy: ['R'],
      unsure: ['U'],
      big: ['BIG'],
    });
    const routed = await makeRouter().execute(request(s, 'm'), attempt);
    expect(calls).toEqual(['a', 'big']);
    expect(routed.value).toBe('BIG');
  });

  it('a fallback with an unknown window is worth a try', async () => {
    const unknown = dep('unknown', 'other', 1);
    const s = snapshot([
      { model: 'm', deployments: [a, b], fallbacks: ['other'] },
      { model: 'other', deployments: [unknown] },
    ]);
    const { calls, attempt } = script({ a: [failure('context_length')], unknown: ['U'] });
    await makeRouter().execute(request(s, 'm'), attempt);
    expect(calls).toEqual(['a', 'unknown']);
  });

  it('with no larger model the provider’s reason reaches the caller as a 400 on messages', async () => {
    const s = snapshot([
      { model: 'm', deployments: [a, b], fallbacks: ['mini'] },
      { model: 'mini', deployments: [small] },
    ]);
    const { calls, attempt } = script({
      a: [failure('context_length', undefined, 'maximum context length is 8000 tokens')],
    });
    const err = await gatewayError(makeRouter().execute(request(s, 'm'), attempt));
    expect(calls).toEqual(['a']);
    expect(err.status).toBe(400);
    expect(err.type).toBe('context_length_exceeded');
    expect(err.param).toBe('messages');
    expect(err.message).toBe('maximum context length is 8000 tokens');
  });
});

describe('errors that stop at once', () => {
  const a = dep('a', 'm', 1);
  const b = dep('b', 'm', 2);
  const snap = snapshot([{ model: 'm', deployments: [a, b] }]);

  it('bad_request is not retried anywhere and keeps the provider’s reason', async () => {
    const { calls, attempt } = script({
      a: [failure('bad_request', undefined, "'tools' is malformed")],
      b: ['B'],
    });
    const err = await gatewayError(makeRouter().execute(request(snap, 'm'), attempt));
    expect(calls).toEqual(['a']);
    expect(err.status).toBe(400);
    expect(err.type).toBe('invalid_request_error');
    expect(err.message).toBe("'tools' is malformed");
    expect(inflight(a)).toBe(0);
    expect(health.circuitState('a')).toBe('closed');
  });

  it('content_policy is not retried either', async () => {
    const { calls, attempt } = script({ a: [failure('content_policy')], b: ['B'] });
    const err = await gatewayError(makeRouter().execute(request(snap, 'm'), attempt));
    expect(calls).toEqual(['a']);
    expect(err.type).toBe('content_policy_violation');
  });

  it('a GatewayError thrown by an attempt propagates as the same object, without failover', async () => {
    const own = new GatewayError('invalid_request_error', 'messages[0]: cannot translate', {
      param: 'messages[0]',
    });
    const { calls, attempt } = script({ a: [own], b: ['B'] });
    const err = await rejection(makeRouter().execute(request(snap, 'm'), attempt));
    expect(err).toBe(own);
    expect(own.status).toBe(400);
    expect(own.param).toBe('messages[0]');
    expect(own.headers).toEqual({});
    expect(calls).toEqual(['a']);
    expect(inflight(a)).toBe(0);
    expect(observed).toEqual([]);
  });

  it('a GatewayError after a failover carries the attempt log headers', async () => {
    const own = new GatewayError('invalid_request_error', 'cannot translate');
    const { attempt } = script({ a: [failure('server')], b: [own] });
    const err = await rejection(makeRouter().execute(request(snap, 'm'), attempt));
    expect(err).toBe(own);
    expect(own.headers).toEqual({ 'x-gantry-attempts': '2', 'x-gantry-failed': 'a' });
  });

  it('a local throw (stack overflow, TypeError) is a 500 of the gateway: circuit closed, no failover', async () => {
    // Threshold 3: five blamed faults would have opened the circuit.
    const local = [
      new RangeError('Maximum call stack size exceeded'),
      new TypeError("Cannot read properties of undefined (reading 'x')"),
      new Error('bug'),
    ];
    for (let i = 0; i < 5; i++) {
      const thrown = local[i % local.length]!;
      const { calls, attempt } = script({ a: [thrown], b: ['B'] });
      const err = await gatewayError(makeRouter().execute(request(snap, 'm'), attempt));
      expect(err.status).toBe(500);
      expect(err.type).toBe('internal_error');
      expect(err.cause).toBe(thrown);
      expect(calls).toEqual(['a']);
      expect(inflight(a)).toBe(0);
    }
    expect(health.circuitState('a')).toBe('closed');
    expect(health.circuitState('b')).toBe('closed');
    // Not an upstream attempt: the per-deployment outcome metrics stay untouched.
    expect(observed).toEqual([]);
  });

  const NO_RETRY: RetryConfig = { ...DEFAULT_RETRY, maxSameRetries: 0 };

  it('a local throw during a half-open probe gives the probe back instead of re-opening', async () => {
    const { attempt: failing } = script({ a: [failure('server'), failure('server'), failure('server')] });
    const solo = snapshot([{ model: 'solo', deployments: [a] }]);
    for (let i = 0; i < 3; i++) await rejection(makeRouter(NO_RETRY).execute(request(solo, 'solo'), failing));
    expect(health.circuitState('a')).toBe('open');
    now += breakerCfg.baseOpenMs;
    const { attempt: buggy } = script({ a: [new RangeError('Maximum call stack size exceeded')] });
    const err = await gatewayError(makeRouter(NO_RETRY).execute(request(solo, 'solo'), buggy));
    expect(err.type).toBe('internal_error');
    // Not a failed probe (that would re-open for twice as long): the next caller may probe at once.
    expect(health.availability(a)).toEqual({ ok: true });
    const { attempt: healthy } = script({ a: ['A'] });
    const routed = await makeRouter(NO_RETRY).execute(request(solo, 'solo'), healthy);
    expect(routed.value).toBe('A');
    expect(health.circuitState('a')).toBe('closed');
  });

  it('ClientAbortError propagates, nothing else is tried and the deployment is not blamed', async () => {
    for (let i = 0; i < 5; i++) {
      const { calls, attempt } = script({ a: [new ClientAbortError()], b: ['B'] });
      await expect(makeRouter().execute(request(snap, 'm'), attempt)).rejects.toBeInstanceOf(
        ClientAbortError,
      );
      expect(calls).toEqual(['a']);
    }
    expect(health.circuitState('a')).toBe('closed');
    expect(inflight(a)).toBe(0);
  });

  it('any failure after the client aborted becomes a ClientAbortError', async () => {
    const ctl = new AbortController();
    const attempt = async (): Promise<string> => {
      ctl.abort();
      throw failure('network');
    };
    await expect(
      makeRouter().execute(request(snap, 'm', { signal: ctl.signal }), attempt),
    ).rejects.toBeInstanceOf(ClientAbortError);
    expect(health.circuitState('a')).toBe('closed');
  });
});

describe('a pinned request', () => {
  const a = dep('a', 'm', 1);
  const snap = snapshot([{ model: 'm', deployments: [a] }]);
  const objects = [{ param: 'training_file', upstreamId: 'file-up1', kind: 'file' }];

  const run = async (error: UpstreamFailure) => {
    const logged: string[] = [];
    const { attempt } = script({ a: [error] });
    const req = request(snap, 'm', {
      missingObject: { objects, log: (_fields, message) => logged.push(message) },
    });
    const err = await gatewayError(makeRouter().execute(req, attempt));
    return { err, logged };
  };

  it("a 404 naming another reference the request sent: logged as the caller's, and not counted", async () => {
    for (let i = 0; i < breakerCfg.failureThreshold; i++) {
      const { err, logged } = await run(
        new UpstreamFailure({
          kind: 'bad_reference',
          status: 404,
          message: 'No such File object: abcdef',
          param: 'validation_file',
        }),
      );
      expect(err.status).toBe(404);
      expect(logged).toHaveLength(1);
      expect(logged[0]).not.toContain('deployment failure');
      expect(logged[0]).toContain("the caller's");
    }
    expect(health.circuitState('a')).toBe('closed');
  });

  it('a 404 naming nothing: logged as a deployment failure, and counted (the check can fail)', async () => {
    for (let i = 0; i < breakerCfg.failureThreshold; i++) {
      const { logged } = await run(
        new UpstreamFailure({
          kind: 'not_found',
          status: 404,
          message: 'Invalid URL (POST /v1/v1/fine_tuning/jobs)',
        }),
      );
      expect(logged[0]).toContain('a deployment failure');
    }
    expect(health.circuitState('a')).toBe('open');
  });
});

describe('nothing to try', () => {
  const a = dep('a', 'm', 1);
  const b = dep('b', 'm', 2);
  const snap = snapshot([{ model: 'm', deployments: [a, b] }]);

  function coolDown(d: Deployment, ms: number) {
    health.coolDown(d, ms, claimed(health, d));
  }
  function trip(d: Deployment) {
    for (let i = 0; i < breakerCfg.failureThreshold; i++) {
      health.fail(d, claimed(health, d));
    }
  }

  it('every deployment cooling down → 429 with retry-after of the soonest, no attempt made', async () => {
    coolDown(a, 7_000);
    coolDown(b, 2_500);
    const { calls, attempt } = script({});
    const err = await gatewayError(makeRouter().execute(request(snap, 'm'), attempt));
    expect(calls).toEqual([]);
    expect(err.status).toBe(429);
    expect(err.type).toBe('rate_limit_exceeded');
    expect(err.headers['retry-after']).toBe('3');
    expect(err.headers['x-gantry-attempts']).toBeUndefined();
  });

  it('every circuit open → 503 with retry-after', async () => {
    trip(a);
    trip(b);
    const err = await gatewayError(makeRouter().execute(request(snap, 'm'), script({}).attempt));
    expect(err.status).toBe(503);
    expect(err.type).toBe('service_unavailable');
    expect(err.headers['retry-after']).toBe(String(breakerCfg.baseOpenMs / 1000));
  });

  it('a mix of open circuits and cooldowns → 503', async () => {
    trip(a);
    coolDown(b, 1_000);
    const err = await gatewayError(makeRouter().execute(request(snap, 'm'), script({}).attempt));
    expect(err.status).toBe(503);
    expect(err.headers['retry-after']).toBe('1');
  });

  it('retry-after is at least 1 second', async () => {
    coolDown(a, 10);
    coolDown(b, 10);
    const err = await gatewayError(makeRouter().execute(request(snap, 'm'), script({}).attempt));
    expect(err.headers['retry-after']).toBe('1');
  });

  it('once the circuit’s open period has passed, a probe goes through and closes it', async () => {
    trip(a);
    trip(b);
    now += breakerCfg.baseOpenMs;
    const { calls, attempt } = script({ a: ['A'] });
    await makeRouter().execute(request(snap, 'm'), attempt);
    expect(calls).toEqual(['a']);
    expect(health.circuitState('a')).toBe('closed');
    expect(health.circuitState('b')).toBe('open');
  });

  it('the breaker ejects a deployment failing across requests', async () => {
    for (let i = 0; i < breakerCfg.failureThreshold; i++) {
      const { attempt } = script({ a: [failure('server')], b: ['B'] });
      await makeRouter().execute(request(snap, 'm'), attempt);
    }
    expect(health.circuitState('a')).toBe('open');
    const { calls, attempt } = script({ b: ['B'] });
    await makeRouter().execute(request(snap, 'm'), attempt);
    expect(calls).toEqual(['b']);
  });

  it('no deployment with the needed capability → 404 on model', async () => {
    const err = await gatewayError(
      makeRouter().execute(request(snap, 'm', { needs: ['documents'] }), script({}).attempt),
    );
    expect(err.status).toBe(404);
    expect(err.param).toBe('model');
  });

  it('an unknown model → 404 on model', async () => {
    const err = await gatewayError(makeRouter().execute(request(snap, 'nope'), script({}).attempt));
    expect(err.status).toBe(404);
    expect(err.type).toBe('model_not_found');
    expect(err.param).toBe('model');
  });
});

describe('attemptHeaders', () => {
  it('X-Gantry-Attempts only when more than one, X-Gantry-Failed only when something failed', () => {
    expect(attemptHeaders({ attempts: 1, failed: [] })).toEqual({});
    expect(attemptHeaders({ attempts: 1, failed: ['a'] })).toEqual({ 'x-gantry-failed': 'a' });
    expect(attemptHeaders({ attempts: 3, failed: ['a', 'b'] })).toEqual({
      'x-gantry-attempts': '3',
      'x-gantry-failed': 'a,b',
    });
  });
});

describe('observer timing', () => {
  it('reports each attempt’s duration in seconds from the injected clock', async () => {
    const a = dep('a', 'm', 1);
    const b = dep('b', 'm', 2);
    const s = snapshot([{ model: 'm', deployments: [a, b] }]);
    const attempt = async (d: Deployment): Promise<string> => {
      now += d.name === 'a' ? 250 : 1_500;
      if (d.name === 'a') throw failure('server');
      return 'B';
    };
    await makeRouter().execute(request(s, 'm'), attempt);
    expect(observed).toEqual([
      { name: 'a', outcome: 'server', seconds: 0.25 },
      { name: 'b', outcome: 'success', seconds: 1.5 },
    ]);
    // The latency average learns from successes only.
    expect(health.view(b).latencyMs).toBe(1_500);
    expect(health.view(a).latencyMs).toBe(0);
  });
});

// Keep the UpstreamError type import honest: the failures the router sees are this shape.
const _shape: UpstreamError = failure('server').upstream;
void _shape;

describe('the deployment retry policy (manifest spec.retry)', () => {
  const policy = {
    attempts: 3,
    backoffMs: 40,
    maxBackoffMs: 400,
    retryOnStatus: new Set([429, 500, 502, 503]),
    retryOnConnectionError: true,
  };
  const primary = dep('p', 'm', 1, { retry: policy });
  const secondary = dep('s', 'm', 2);
  const snap = snapshot([{ model: 'm', deployments: [primary, secondary] }]);

  it('retries the primary up to its attempts before failing over', async () => {
    const { calls, attempt } = script({ p: [failure('server'), failure('network'), 'P'] });
    const routed = await makeRouter().execute(request(snap, 'm'), attempt);
    expect(calls).toEqual(['p', 'p', 'p']);
    expect(routed.deployment.name).toBe('p');
    expect(sleeps).toEqual([20, 40]);
  });

  it('fails over once its attempts are spent', async () => {
    const { calls, attempt } = script({
      p: [failure('server'), failure('server'), failure('server')],
      s: ['S'],
    });
    const routed = await makeRouter().execute(request(snap, 'm'), attempt);
    expect(calls).toEqual(['p', 'p', 'p', 's']);
    expect(routed.log).toEqual({ attempts: 4, failed: ['p'] });
  });

  it('a timeout is failed over at once whatever the policy', async () => {
    const { calls, attempt } = script({ p: [failure('timeout')], s: ['S'] });
    await makeRouter().execute(request(snap, 'm'), attempt);
    expect(calls).toEqual(['p', 's']);
  });

  it('a 429 with a short Retry-After is waited out on the primary; a long one fails over', async () => {
    const short = script({ p: [failure('rate_limited', 300), 'P'] });
    expect((await makeRouter().execute(request(snap, 'm'), short.attempt)).deployment.name).toBe('p');
    expect(sleeps).toEqual([300]);
    health.reset();
    const long = script({ p: [failure('rate_limited', 401)], s: ['S'] });
    await makeRouter().execute(request(snap, 'm'), long.attempt);
    expect(long.calls).toEqual(['p', 's']);
  });

  it('the request deadline cuts the retries short', async () => {
    const { calls, attempt } = script({ p: [failure('rate_limited', 300)], s: ['S'] });
    await makeRouter().execute(request(snap, 'm', { deadline: now + 300 }), attempt);
    expect(calls).toEqual(['p', 's']);
  });

  it('a deployment whose circuit opens during its retries is left for the next one, which starts afresh', async () => {
    const s2 = dep('s2', 'm', 2, { retry: policy });
    const snap2 = snapshot([
      { model: 'm', deployments: [dep('p', 'm', 1, { retry: { ...policy, attempts: 5 } }), s2] },
    ]);
    const { calls, attempt } = script({
      p: [failure('server'), failure('server'), failure('server')],
      s2: [failure('server'), 'S'],
    });
    const routed = await makeRouter().execute(request(snap2, 'm'), attempt);
    // p opens after 3 faults (threshold 3); s2 still gets its own retry.
    expect(calls).toEqual(['p', 'p', 'p', 's2', 's2']);
    expect(routed.deployment.name).toBe('s2');
  });
});

describe('a stream’s verdict at its end', () => {
  const a = dep('a', 'm', 1);
  const snap = snapshot([{ model: 'm', deployments: [a] }]);

  it('from a stream admitted before the circuit opened, it neither closes nor reopens it', async () => {
    const router = makeRouter();
    const streaming = { ...request(snap, 'm'), verdictAtEnd: true };
    const old = await router.execute(streaming, script({ a: ['long stream'] }).attempt);
    for (let i = 0; i < breakerCfg.failureThreshold; i++) {
      health.fail(a, claimed(health, a));
    }
    expect(health.circuitState('a')).toBe('open');
    router.streamEnded(old, undefined);
    expect(health.circuitState('a')).toBe('open');

    now += breakerCfg.baseOpenMs;
    const trial = await router.execute(streaming, script({ a: ['trial'] }).attempt);
    expect(health.circuitState('a')).toBe('closed');
    // The old stream is cut after the trial closed the circuit: it no longer counts.
    router.streamEnded(old, { kind: 'network', status: 0, message: 'reset' });
    router.streamEnded(trial, undefined);
    expect(health.circuitState('a')).toBe('closed');
  });
});

describe('an event past the SSE bound (oversized)', () => {
  const a = dep('a', 'm', 1);
  const b = dep('b', 'm', 2);
  const c = dep('c', 'm', 3);
  const snap = snapshot([{ model: 'm', deployments: [a, b, c] }]);
  const LIMIT = 'upstream sent an event-stream line longer than 16777216 bytes';
  /** One the request may have asked for (its echo): see oversized-cause.ts. */
  const big = () =>
    new UpstreamFailure({ kind: 'oversized', status: 0, message: LIMIT, requestCause: 'echo' });

  it('no request asked for: the deployment is failed over, and ejected at the threshold', async () => {
    const broken = () => failure('oversized', undefined, LIMIT);
    for (let i = 0; i < breakerCfg.failureThreshold; i++) {
      const { calls, attempt } = script({ a: [broken()], b: ['B'] });
      expect((await makeRouter().execute(request(snap, 'm'), attempt)).value).toBe('B');
      expect(calls).toEqual(['a', 'b']);
    }
    expect(health.circuitState('a')).toBe('open');
    // Alone, it is the caller's 502, which the SDKs may repeat (another read may work).
    const alone = snapshot([{ model: 'm', deployments: [c] }]);
    const err = await gatewayError(
      makeRouter().execute(request(alone, 'm'), script({ c: [broken()] }).attempt),
    );
    expect(err.status).toBe(502);
    expect(err.message).toBe(`deployment c failed: ${LIMIT}, the gateway's bound on one streamed event`);
    expect(err.headers['x-should-retry']).toBeUndefined();
  });

  it('one the request may have asked for: one deployment is read, the caller gets the limit, and no circuit opens however often it is asked', async () => {
    // A caller can shape such an event (echo and logprobs of a long prompt): failed over, each
    // request read 16 MiB from every deployment and three of them opened every circuit.
    for (let i = 0; i < breakerCfg.failureThreshold + 2; i++) {
      const { calls, attempt } = script({ a: [big()], b: ['B'], c: ['C'] });
      const err = await gatewayError(makeRouter().execute(request(snap, 'm'), attempt));
      expect(calls).toEqual(['a']);
      expect(err.status).toBe(502);
      expect(err.message).toBe(
        `deployment a failed: ${LIMIT}, the gateway's bound on one streamed event (this request's echo can reach it)`,
      );
      expect(err.headers['x-should-retry']).toBe('false');
      expect(err.headers['x-gantry-failed']).toBe('a');
    }
    for (const d of [a, b, c]) {
      expect(health.circuitState(d.name)).toBe('closed');
      expect(inflight(d)).toBe(0);
    }
    expect(observed.map((o) => o.outcome)).toEqual(Array(breakerCfg.failureThreshold + 2).fill('oversized'));
    const next = await makeRouter().execute(request(snap, 'm'), script({ a: ['A'] }).attempt);
    expect(next.value).toBe('A');
  });

  it('after the first token, one the request may have asked for is no verdict: the deployment’s past faults neither grow nor clear', async () => {
    const router = makeRouter();
    const streaming = { ...request(snap, 'm'), verdictAtEnd: true };
    const cut = { kind: 'network', status: 0, message: 'reset' } as const;
    for (let i = 0; i < breakerCfg.failureThreshold - 1; i++)
      router.streamEnded(await router.execute(streaming, script({ a: ['s'] }).attempt), cut);
    for (let i = 0; i < breakerCfg.failureThreshold; i++) {
      router.streamEnded(await router.execute(streaming, script({ a: ['s'] }).attempt), big().upstream);
      expect(health.circuitState('a')).toBe('closed');
    }
    // Not cleared either: one more cut is the threshold's.
    router.streamEnded(await router.execute(streaming, script({ a: ['s'] }).attempt), cut);
    expect(health.circuitState('a')).toBe('open');
  });
});

describe('a create cut by the request deadline', () => {
  const a = dep('a', 'm', 1);
  const b = dep('b', 'm', 2);
  const snap = snapshot([{ model: 'm', deployments: [a, b] }]);

  it('tells the caller it may exist, and the SDKs not to repeat it; the deployment is released', async () => {
    const deadline = now + 500;
    // The attempt had 0.5 s, less than the deployment's own 1 s limit: the deadline cut it.
    const req = request(snap, 'm', { createsObject: true, deadline });
    const { calls, attempt } = script({ a: [failure('timeout')] });
    const err = await gatewayError(
      makeRouter().execute(req, async (d) => {
        now = deadline;
        return attempt(d);
      }),
    );
    expect(calls).toEqual(['a']);
    expect(err.status).toBe(504);
    expect(err.message).toMatch(/may have created the object/);
    expect(err.headers['x-should-retry']).toBe('false');
    expect(health.view(a).inflight).toBe(0);
    expect(health.circuitState('a')).toBe('closed');
  });
});

describe('a timeout cut by the request deadline', () => {
  const a = dep('a', 'm', 1);
  const b = dep('b', 'm', 2);
  const snap = snapshot([{ model: 'm', deployments: [a, b] }]);

  it('ends the request, even a few ms early, without failing over or charging the deployment', async () => {
    for (let i = 0; i < breakerCfg.failureThreshold; i++) {
      // Half a second left: less than the deployment's own 1 s limit, so the deadline cut it.
      const deadline = now + 500;
      const { calls, attempt } = script({ a: [failure('timeout')] });
      const err = await gatewayError(
        makeRouter().execute(request(snap, 'm', { deadline }), async (d) => {
          // Within the deadline's slack: some time is left, but not for another attempt.
          now = deadline - 10;
          return attempt(d);
        }),
      );
      expect(calls).toEqual(['a']);
      expect(err.status).toBe(504);
      expect(err.headers['x-should-retry']).toBeUndefined();
      expect(err.headers[ResponseHeaders.failed]).toBe('a');
    }
    expect(observed.map((o) => o.outcome)).toEqual(['timeout', 'timeout', 'timeout']);
    expect(health.circuitState('a')).toBe('closed');
    expect(health.view(a).inflight).toBe(0);
  });

  it('the deployment’s own limit firing first still counts against it', async () => {
    for (let i = 0; i < breakerCfg.failureThreshold; i++) {
      const { calls, attempt } = script({ a: [failure('timeout')], b: ['B'] });
      const routed = await makeRouter().execute(request(snap, 'm'), attempt);
      expect(calls).toEqual(['a', 'b']);
      expect(routed.value).toBe('B');
    }
    expect(health.circuitState('a')).toBe('open');
  });
});

describe('a byte-limit refusal is not re-uploaded to the same endpoint', () => {
  const bytes = () =>
    new UpstreamFailure({
      kind: 'too_large',
      status: 413,
      code: 'request_too_large',
      message: 'request too large for the upstream: Request exceeds the maximum allowed number of bytes.',
    });
  const anthropic = (name: string, priority: number, baseUrl: string): Deployment =>
    dep(name, 'm', priority, {
      provider: 'anthropic',
      target: testTarget({ provider: 'anthropic', baseUrl, upstreamModel: 'm' }),
    });

  it('skips later deployments of the same provider and host, and tries another host', async () => {
    const a1 = anthropic('a1', 1, 'https://api.anthropic.com');
    const a2 = anthropic('a2', 2, 'https://API.anthropic.com/v1');
    const a3 = anthropic('a3', 3, 'https://proxy.example');
    const snap = snapshot([{ model: 'm', deployments: [a1, a2, a3] }]);
    const { calls, attempt } = script({ a1: [bytes()], a2: [bytes()], a3: ['ok'] });
    const out = await makeRouter().execute(request(snap, 'm'), attempt);
    expect(out.value).toBe('ok');
    expect(calls).toEqual(['a1', 'a3']);
  });

  it('gives the caller the 413 after one upload when every deployment shares the endpoint', async () => {
    const snap = snapshot([
      {
        model: 'm',
        deployments: [1, 2, 3, 4, 5].map((i) => anthropic(`a${i}`, i, 'https://api.anthropic.com')),
      },
    ]);
    const { calls, attempt } = script({ a1: [bytes()], a2: [bytes()], a3: [bytes()] });
    const err = await gatewayError(makeRouter().execute(request(snap, 'm'), attempt));
    expect(err.status).toBe(413);
    expect(calls).toEqual(['a1']);
  });

  it('a token-rate too_large still fails over to the same host (limits differ by key and tier)', async () => {
    const a1 = anthropic('a1', 1, 'https://api.anthropic.com');
    const a2 = anthropic('a2', 2, 'https://api.anthropic.com');
    const snap = snapshot([{ model: 'm', deployments: [a1, a2] }]);
    const rate = new UpstreamFailure({ kind: 'too_large', status: 429, message: 'Limit 10, Requested 20' });
    const { calls, attempt } = script({ a1: [rate], a2: ['ok'] });
    expect((await makeRouter().execute(request(snap, 'm'), attempt)).value).toBe('ok');
    expect(calls).toEqual(['a1', 'a2']);
  });
});
