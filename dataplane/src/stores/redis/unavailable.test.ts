/**
 * Redis going away mid-run, against a private real redis-server: every operation rejects
 * quickly with StoreUnavailableError (so money fails closed with a 503), the stores recover
 * when Redis is back, and a settle whose reply was lost is not charged twice when retried.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis, type RedisInstance } from '../../../../test/harness/redis.ts';
import { StoreUnavailableError } from '../errors.ts';
import { createRedisStores, type Stores } from '../index.ts';

const key = { tenant: 'acme', keyId: 'ci' };
const budget = { limitUsd: 10, period: 'monthly' as const };

async function timed(p: Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const start = performance.now();
  try {
    await p;
    return { error: undefined, ms: performance.now() - start };
  } catch (error) {
    return { error, ms: performance.now() - start };
  }
}

describe('redis stores when Redis is unavailable', () => {
  let redis: RedisInstance;
  let stores: Stores;

  beforeAll(async () => {
    redis = await startRedis();
    stores = createRedisStores(
      { url: redis.url, commandTimeoutMs: 300, connectTimeoutMs: 300 },
      { prefix: 'u' },
    );
    await stores.ready();
  });

  afterAll(async () => {
    await stores?.close();
    await redis?.stop();
  });

  const operations = (s: Stores, reservation: Parameters<Stores['budgets']['settle']>[0]) => ({
    'rateLimit.acquire': () => s.rateLimiter.acquire(key, { requestsPerMinute: 10 }, 5),
    'budget.reserve': () => s.budgets.reserve({ ...key, budget, estimateUsd: 1 }),
    'budget.settle': () => s.budgets.settle(reservation, 1),
    'budget.state': () => s.budgets.state(key, budget),
    'wallet.move': () => s.wallets.credit('acme', 'topup', { amountUsd: 1 }),
    'wallet.balance': () => s.wallets.balance('acme'),
    'wallet.ledger': () => s.wallets.ledger('acme'),
    'wallet.rebuildBalance': () => s.wallets.rebuildBalance('acme'),
  });

  it('rejects every operation at once with StoreUnavailableError while the server is down, then recovers', async () => {
    const r = await stores.budgets.reserve({ ...key, budget, estimateUsd: 1 });
    if (!r.ok) throw new Error('reserve failed');
    await redis.stop();
    for (const [name, op] of Object.entries(operations(stores, r.reservation))) {
      const { error, ms } = await timed(op());
      expect(error, name).toBeInstanceOf(StoreUnavailableError);
      expect((error as StoreUnavailableError).operation, name).toBe(name);
      expect(ms, name).toBeLessThan(250);
    }
    await redis.restart();
    await stores.ready(5000);
    // The restarted server lost its script cache (and, without persistence, its data): both are fine.
    expect((await stores.rateLimiter.acquire(key, { requestsPerMinute: 10 }, 5)).allowed).toBe(true);
    expect((await stores.budgets.reserve({ ...key, budget, estimateUsd: 1 })).ok).toBe(true);
    expect((await stores.wallets.credit('acme', 'topup', { amountUsd: 1 })).ok).toBe(true);
  });

  it('times out on a hung server, and a retried settle is charged once', async () => {
    const hung = { tenant: 'acme', keyId: 'hung' };
    const total = { limitUsd: 10, period: 'total' as const };
    const r = await stores.budgets.reserve({ ...hung, budget: total, estimateUsd: 2 });
    if (!r.ok) throw new Error('reserve failed');
    redis.pause();
    try {
      const { error, ms } = await timed(stores.budgets.settle(r.reservation, 1.5));
      expect(error).toBeInstanceOf(StoreUnavailableError);
      expect(ms).toBeLessThan(1000);
    } finally {
      redis.resume();
    }
    // The server ran the settle it received while hung; the caller, told it failed, retries.
    const retry = await stores.budgets.settle(r.reservation, 1.5);
    expect(retry.applied).toBe(false);
    expect(await stores.budgets.state(hung, total)).toMatchObject({
      spentUsd: 1.5,
      heldUsd: 0,
    });
  });

  it('a new client waits for readiness and fails with StoreUnavailableError when Redis never comes', async () => {
    await redis.stop();
    const late = createRedisStores({ url: redis.url, connectTimeoutMs: 200 }, { prefix: 'u' });
    try {
      await expect(late.ready(300)).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(late.budgets.reserve({ ...key, budget, estimateUsd: 1 })).rejects.toBeInstanceOf(
        StoreUnavailableError,
      );
      await redis.restart();
      await late.ready(5000);
      expect((await late.budgets.reserve({ ...key, budget, estimateUsd: 1 })).ok).toBe(true);
    } finally {
      await late.close();
    }
  });
});
