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
import { admit, admitRequest, countRefused, reserveHold, type AdmissionDeps } from './admission.ts';
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
const ADMIT_ESTIMATE_USD = 0.2;
/** The tokens admit counts against the rate limit for that request. */
const ADMIT_TOKENS = 200;
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

/**
 * `n/a`: the entry point has no business with that store for the key, so the store is down; a
 * call to it would fail the row.
 */
type LimiterMode = 'ok' | 'refusing' | 'unavailable' | 'error' | 'n/a';
type BudgetMode = 'ok' | 'refusing' | 'unavailable' | 'n/a';
/** How a store that fails does so: a rejected promise, or a throw before any promise exists. */
type FailStyle = 'rejects' | 'throws';

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
      if (limiter === 'unavailable' || limiter === 'n/a')
        return failWith(style, new StoreUnavailableError('rate.acquire'));
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
      if (budget === 'unavailable' || budget === 'n/a')
        return failWith(style, new StoreUnavailableError('budget.reserve'));
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
    heldForWork: (key) => real.budgets.heldForWork(key),
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

type Entry = 'admit' | 'admitRequest' | 'countRefused' | 'reserveHold';
/** `passes`: the call resolves (for countRefused, the refusal it counts stands as it was). */
type Outcome = 'passes' | '429' | '402' | '503 rate limiter' | '503 budget store' | 'limiter error';
type Row = [
  entry: Entry,
  key: KeyShape,
  limiter: LimiterMode,
  budget: BudgetMode,
  outcome: Outcome,
  acquires: 0 | 1,
  reserves: 0 | 1,
];

/** What each entry point does with each store state; the counts are calls reaching the stores. */
const TABLE: Row[] = [
  // A key with both: one step through the admitter, the rate limit first.
  ['admit', 'rate+budget', 'ok', 'ok', 'passes', 1, 1],
  ['admit', 'rate+budget', 'ok', 'refusing', '402', 1, 1],
  ['admit', 'rate+budget', 'ok', 'unavailable', '503 budget store', 1, 1],
  ['admit', 'rate+budget', 'refusing', 'ok', '429', 1, 0],
  ['admit', 'rate+budget', 'refusing', 'refusing', '429', 1, 0],
  ['admit', 'rate+budget', 'refusing', 'unavailable', '429', 1, 0],
  ['admit', 'rate+budget', 'unavailable', 'ok', '503 rate limiter', 1, 0],
  ['admit', 'rate+budget', 'unavailable', 'refusing', '503 rate limiter', 1, 0],
  ['admit', 'rate+budget', 'unavailable', 'unavailable', '503 rate limiter', 1, 0],
  ['admit', 'rate+budget', 'error', 'ok', 'limiter error', 1, 0],
  ['admit', 'rate+budget', 'error', 'refusing', 'limiter error', 1, 0],
  ['admit', 'rate+budget', 'error', 'unavailable', 'limiter error', 1, 0],
  ['admit', 'rate', 'ok', 'n/a', 'passes', 1, 0],
  ['admit', 'rate', 'refusing', 'n/a', '429', 1, 0],
  ['admit', 'rate', 'unavailable', 'n/a', '503 rate limiter', 1, 0],
  ['admit', 'rate', 'error', 'n/a', 'limiter error', 1, 0],
  ['admit', 'budget', 'n/a', 'ok', 'passes', 0, 1],
  ['admit', 'budget', 'n/a', 'refusing', '402', 0, 1],
  ['admit', 'budget', 'n/a', 'unavailable', '503 budget store', 0, 1],
  // The rate limit alone; the budget is reserveHold's, after it.
  ['admitRequest', 'rate+budget', 'ok', 'n/a', 'passes', 1, 0],
  ['admitRequest', 'rate+budget', 'refusing', 'n/a', '429', 1, 0],
  ['admitRequest', 'rate+budget', 'unavailable', 'n/a', '503 rate limiter', 1, 0],
  ['admitRequest', 'rate+budget', 'error', 'n/a', 'limiter error', 1, 0],
  ['admitRequest', 'budget', 'n/a', 'n/a', 'passes', 0, 0],
  // Counting a refusal: past the limit it becomes the 429; a limiter that is down changes nothing.
  ['countRefused', 'rate+budget', 'ok', 'n/a', 'passes', 1, 0],
  ['countRefused', 'rate+budget', 'refusing', 'n/a', '429', 1, 0],
  ['countRefused', 'rate+budget', 'unavailable', 'n/a', 'passes', 1, 0],
  ['countRefused', 'rate+budget', 'error', 'n/a', 'limiter error', 1, 0],
  ['countRefused', 'budget', 'n/a', 'n/a', 'passes', 0, 0],
  ['reserveHold', 'rate+budget', 'n/a', 'ok', 'passes', 0, 1],
  ['reserveHold', 'rate+budget', 'n/a', 'refusing', '402', 0, 1],
  ['reserveHold', 'rate+budget', 'n/a', 'unavailable', '503 budget store', 0, 1],
  ['reserveHold', 'rate', 'n/a', 'n/a', 'passes', 0, 0],
];

/** The ticket admitRequest left on the request before reserveHold runs. */
const EARLIER_TICKET = { ...KEY_REF, id: 'ticket-earlier', tokens: 0 };

async function enter(entry: Entry, deps: AdmissionDeps, ctx: RequestContext) {
  switch (entry) {
    case 'admit':
      return admitChat(deps, ctx);
    case 'admitRequest':
      return admitRequest(deps, ctx);
    case 'countRefused':
      return countRefused(deps.stores, ctx);
    case 'reserveHold':
      ctx.admission = { ticket: EARLIER_TICKET, reservation: undefined };
      await reserveHold(deps, ctx, HOLD_ESTIMATE_USD);
      return ctx.admission;
  }
}

const rateLimitHeaderNames = (headers: Record<string, string>) =>
  Object.keys(headers)
    .filter((h) => h.startsWith('x-ratelimit-'))
    .sort();
const RATE_LIMIT_HEADERS = [
  'x-ratelimit-limit-requests',
  'x-ratelimit-limit-tokens',
  'x-ratelimit-remaining-requests',
  'x-ratelimit-remaining-tokens',
  'x-ratelimit-reset-requests',
  'x-ratelimit-reset-tokens',
];

function expectOutcome(outcome: Outcome, err: unknown, limiterBug: Error): void {
  switch (outcome) {
    case 'passes':
      expect(err).toBeUndefined();
      return;
    case 'limiter error':
      // Not a store outage: a bug is not dressed up as a 503 the client would retry.
      expect(err).toBe(limiterBug);
      return;
    case '503 rate limiter':
      return expectUnavailable(err, 'rate limiter');
    case '503 budget store':
      return expectUnavailable(err, 'budget store');
    case '429': {
      expect(err).toBeInstanceOf(GatewayError);
      const e = err as GatewayError;
      expect([e.status, e.type]).toEqual([429, 'rate_limit_exceeded']);
      expect(rateLimitHeaderNames(e.headers)).toEqual(RATE_LIMIT_HEADERS);
      expect(Number(e.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      return;
    }
    case '402': {
      expect(err).toBeInstanceOf(GatewayError);
      const e = err as GatewayError;
      expect([e.status, e.type]).toEqual([402, 'budget_exceeded']);
      return;
    }
  }
}

describe.each<FailStyle>(['rejects', 'throws'])('admission entry points (a store that fails %s)', (style) => {
  it.each(TABLE)(
    '%s, key with %s, limiter %s, budget %s: %s',
    async (entry, shape, limiter, budget, outcome, acquires, reserves) => {
      const { stores, calls, limiterBug, held } = await rig(limiter, budget, style);
      const ctx = context(shape);
      let err: unknown;
      let admission: Awaited<ReturnType<typeof enter>> = undefined;
      try {
        admission = await enter(entry, { stores }, ctx);
      } catch (e) {
        err = e;
      }

      expectOutcome(outcome, err, limiterBug);
      // Rate limit before budget: a refused or failed rate step never reaches the budget.
      expect({ acquires: calls.acquire, reserves: calls.reserve }).toEqual({ acquires, reserves });
      // Admission never releases a hold: a refusal has none to give back.
      expect(calls.release).toBe(0);

      // The headers come with the limiter's decision, whatever the budget store does after it
      // (a 503 from a budget store that is down included: the rate-limit state is known then).
      const decided = acquires === 1 && (limiter === 'ok' || limiter === 'refusing');
      expect(rateLimitHeaderNames(ctx.responseHeaders)).toEqual(decided ? RATE_LIMIT_HEADERS : []);
      if (decided) {
        expect(ctx.responseHeaders['x-ratelimit-limit-requests']).toBe(String(RATE.requestsPerMinute));
        // The request counts; its tokens (admit's alone: the others count none) only when it
        // was let through (a budget refusal or failure gives them back, a rate refusal counted none).
        const counted = entry === 'admit' && outcome === 'passes' ? ADMIT_TOKENS : 0;
        const requestsLeft = limiter === 'refusing' ? 0 : RATE.requestsPerMinute! - 1;
        expect([
          ctx.responseHeaders['x-ratelimit-remaining-requests'],
          ctx.responseHeaders['x-ratelimit-remaining-tokens'],
        ]).toEqual([String(requestsLeft), String(RATE.tokensPerMinute! - counted)]);
      }

      const holds = outcome === 'passes' && reserves === 1;
      const estimate = entry === 'reserveHold' ? HOLD_ESTIMATE_USD : ADMIT_ESTIMATE_USD;
      expect(await held()).toBeCloseTo(holds ? estimate : 0, 9);
      if (outcome !== 'passes') return;

      if (entry === 'reserveHold') expect(admission?.ticket).toBe(EARLIER_TICKET);
      else if (entry !== 'countRefused') expect(admission?.ticket !== undefined).toBe(acquires === 1);
      const reservation = admission?.reservation;
      expect(reservation !== undefined).toBe(holds);
      if (!reservation) return;
      // The hold the caller got is the only one: releasing it leaves nothing held.
      expect(reservation.amountUsd).toBeCloseTo(estimate, 9);
      await stores.budgets.release(reservation);
      expect(await held()).toBe(0);
    },
  );
});

describe('settlements still owed from a budget store outage', () => {
  it.each<Entry>(['admit', 'admitRequest'])(
    '%s refuses with a 503 before asking any store',
    async (entry) => {
      const { stores, calls } = await rig('ok', 'ok');
      const err = await failure(enter(entry, { stores, journal: { pending: 2 } }, context('rate+budget')));
      expect(err).toBeInstanceOf(GatewayError);
      const e = err as GatewayError;
      expect([e.status, e.headers['retry-after']]).toEqual([503, '1']);
      expect(e.message).toContain('2 settlements from a budget store outage are still being applied');
      expect(calls).toEqual({ acquire: 0, adjust: 0, reserve: 0, release: 0 });
    },
  );
});
