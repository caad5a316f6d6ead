/**
 * The four admission entry points (admit, admitRequest, countRefused, reserveHold) against the
 * real in-process stores, wrapped only to count calls and to take a store down: fail closed
 * (503, retry-after 1) where money or limits are decided, fail open where a refusal is merely
 * being counted, the rate limit before the budget, and no hold left behind by a refusal.
 */
import type { ApiKeySpec } from '@gantry/crds';
import { describe, expect, it } from 'vitest';
import type { ModelRoute } from '../config/snapshot.ts';
import { GatewayError } from '../errors.ts';
import { SequentialAdmitter } from '../stores/admission.ts';
import { StoreUnavailableError } from '../stores/errors.ts';
import {
  createMemoryStores,
  type BudgetLimit,
  type BudgetStore,
  type RateLimiter,
  type RateLimits,
  type Stores,
} from '../stores/index.ts';
import { testDeployment } from '../router/testing.ts';
import { admit, reserveHold, type AdmissionDeps } from './admission.ts';
import { freshMetering, type RequestContext } from './context.ts';

const KEY_REF = { tenant: 'acme', keyId: 'acme/ci' };
const BUDGET: BudgetLimit = { limitUsd: 1, period: 'monthly' };
/** One request a minute: a second one is refused on the requests dimension. */
const RATE: RateLimits = { requestsPerMinute: 1, tokensPerMinute: 100_000 };

/** $1,000 per million tokens either way: 100 prompt + 100 output tokens are held at $0.20. */
const ROUTE: ModelRoute = {
  model: 'm',
  deployments: [testDeployment({ pricing: { inputPerMillionTokens: 1_000, outputPerMillionTokens: 1_000 } })],
  fallbacks: [],
  capabilities: new Set(['chat']),
  ownedBy: 'openai',
};
const HOLD_ESTIMATE_USD = 0.3;

type KeyShape = 'rate+budget' | 'rate' | 'budget';

function context(shape: KeyShape): RequestContext {
  const spec: ApiKeySpec = {
    tenantRef: { name: KEY_REF.tenant },
    ...(shape !== 'budget' && { rateLimit: RATE }),
    ...(shape !== 'rate' && { budget: BUDGET }),
  };
  const now = Date.now();
  return {
    id: 'req-1',
    requestId: 'req-1',
    snapshot: {
      version: 1,
      source: 'test',
      loadedAt: new Date(now),
      models: new Map(),
      keys: new Map(),
      tenants: new Map(),
    },
    key: {
      id: KEY_REF.keyId,
      hash: Buffer.alloc(32),
      tenant: KEY_REF.tenant,
      models: undefined,
      role: 'user',
      spec,
    },
    tenant: {
      name: KEY_REF.tenant,
      models: undefined,
      spec: { models: ['*'] },
      guardrails: undefined,
      cache: undefined,
    },
    signal: new AbortController().signal,
    startedAt: now,
    deadline: now + 60_000,
    requestHeaders: {},
    log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
    ...freshMetering(),
    trace: undefined,
    upstreamHeaders: {},
  };
}

export type LimiterMode = 'ok' | 'refusing' | 'unavailable' | 'error';
export type BudgetMode = 'ok' | 'refusing' | 'unavailable';
/** How a store that fails does so: a rejected promise, or a throw before any promise exists. */
export type FailStyle = 'rejects' | 'throws';

interface Calls {
  acquire: number;
  adjust: number;
  reserve: number;
  release: number;
}

interface Rig {
  stores: Stores;
  calls: Calls;
  /** The error a limiter in `error` mode fails with: it must reach the caller as it is. */
  limiterBug: Error;
  /** What the real budget store holds for the key now. */
  held(): Promise<number>;
}

function failWith<T>(style: FailStyle, err: Error): Promise<T> {
  if (style === 'throws') throw err;
  return Promise.reject(err);
}

/**
 * The real in-process stores, each put in the state `mode` names (a refusing limiter has had
 * its one request this minute, a refusing budget is spent), behind wrappers that count calls
 * and stand in for a store that cannot be reached. The admitter is the in-process one over the
 * wrappers, so a key with both limits goes through them too.
 */
async function rig(limiter: LimiterMode, budget: BudgetMode, style: FailStyle = 'rejects'): Promise<Rig> {
  const real = createMemoryStores();
  const calls: Calls = { acquire: 0, adjust: 0, reserve: 0, release: 0 };
  const limiterBug = new Error('limiter bug');
  if (limiter === 'refusing') await real.rateLimiter.acquire(KEY_REF, RATE, 0);
  if (budget === 'refusing')
    await real.budgets.charge({ ...KEY_REF, budget: BUDGET, amountUsd: BUDGET.limitUsd });

  const rateLimiter: RateLimiter = {
    acquire(key, limits, tokens) {
      calls.acquire++;
      if (limiter === 'unavailable') return failWith(style, new StoreUnavailableError('rate.acquire'));
      if (limiter === 'error') return failWith(style, limiterBug);
      return real.rateLimiter.acquire(key, limits, tokens);
    },
    adjust(ticket, tokens) {
      calls.adjust++;
      return real.rateLimiter.adjust(ticket, tokens);
    },
  };
  const budgets: BudgetStore = {
    reserve(req) {
      calls.reserve++;
      if (budget === 'unavailable') return failWith(style, new StoreUnavailableError('budget.reserve'));
      return real.budgets.reserve(req);
    },
    release(reservation) {
      calls.release++;
      return real.budgets.release(reservation);
    },
    settle: (reservation, usd) => real.budgets.settle(reservation, usd),
    charge: (req) => real.budgets.charge(req),
    retain: (reservation, id, ttl) => real.budgets.retain(reservation, id, ttl),
    state: (key, limit) => real.budgets.state(key, limit),
  };
  return {
    stores: { ...real, rateLimiter, budgets, admitter: new SequentialAdmitter(rateLimiter, budgets) },
    calls,
    limiterBug,
    held: async () => (await real.budgets.state(KEY_REF, BUDGET)).heldUsd,
  };
}

const admitChat = (deps: AdmissionDeps, ctx: RequestContext) =>
  admit(
    deps,
    ctx,
    () => [ROUTE],
    () => 100,
    { maxTokens: 100 },
  );

async function failure(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected a refusal, but the call succeeded');
}

function expectUnavailable(err: unknown, store: 'rate limiter' | 'budget store'): void {
  expect(err).toBeInstanceOf(GatewayError);
  const e = err as GatewayError;
  expect({ status: e.status, type: e.type, headers: e.headers }).toEqual({
    status: 503,
    type: 'service_unavailable',
    headers: { 'retry-after': '1' },
  });
  expect(e.message).toContain(`the ${store} is unavailable`);
  expect(e.cause).toBeInstanceOf(StoreUnavailableError);
}

describe('a budget store whose reserve throws before returning a promise', () => {
  it('admit (a key with a budget only) answers the 503, not the raw error', async () => {
    const { stores, calls } = await rig('unavailable', 'unavailable', 'throws');
    const err = await failure(admitChat({ stores }, context('budget')));
    expectUnavailable(err, 'budget store');
    expect(calls.reserve).toBe(1);
  });

  it('reserveHold answers the 503, not the raw error', async () => {
    const { stores, calls } = await rig('unavailable', 'unavailable', 'throws');
    const err = await failure(reserveHold({ stores }, context('rate+budget'), HOLD_ESTIMATE_USD));
    expectUnavailable(err, 'budget store');
    expect(calls.reserve).toBe(1);
  });
});
