/**
 * A key with a rate limit and a budget is admitted in one Redis round trip (one script call),
 * on a private real redis-server so no other suite's commands are counted; and an unreachable
 * Redis is reported as the rate limiter's, as the separate calls did.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis, type RedisInstance } from '../../../../test/harness/redis.ts';
import { AdmissionStoreError } from '../admission.ts';
import { StoreUnavailableError } from '../errors.ts';
import { createRedisStores, type Stores } from '../index.ts';

const key = { tenant: 'acme', keyId: 'ci' };
const budget = { limitUsd: 10, period: 'monthly' as const };

/** Commands the server has run, by name (INFO commandstats). */
async function commandCalls(admin: Redis): Promise<Map<string, number>> {
  const info = await admin.info('commandstats');
  const calls = new Map<string, number>();
  for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls.set(m[1]!, Number(m[2]));
  return calls;
}

describe('redis admission', () => {
  let redis: RedisInstance;
  let stores: Stores;
  let admin: Redis;

  beforeAll(async () => {
    redis = await startRedis();
    stores = createRedisStores(
      { url: redis.url, commandTimeoutMs: 300, connectTimeoutMs: 300 },
      { prefix: 'a' },
    );
    await stores.ready();
    admin = new Redis(redis.url);
  });

  afterAll(async () => {
    admin?.disconnect();
    await stores?.close();
    await redis?.stop();
  });

  it('runs one script per admission, whatever the outcome', async () => {
    const limits = { requestsPerMinute: 2, tokensPerMinute: 1000 };
    // Loads the script once (EVALSHA then EVAL on a fresh server), so the counts below are steady.
    await stores.admitter.admit(key, limits, 10, { ...key, budget, estimateUsd: 1 });
    for (const [estimateUsd, expected] of [
      [1, 'held'],
      [1, 'limited'],
    ] as const) {
      const before = await commandCalls(admin);
      const r = await stores.admitter.admit(key, limits, 10, { ...key, budget, estimateUsd });
      const after = await commandCalls(admin);
      expect(r.reserve?.ok ? 'held' : r.decision.allowed ? 'broke' : 'limited').toBe(expected);
      // Commands inside a script are counted too: the client's own are the script calls.
      const scripts = (m: Map<string, number>) => ['eval', 'evalsha'].map((c) => m.get(c) ?? 0);
      const [evalBefore, shaBefore] = scripts(before);
      expect(scripts(after)).toEqual([evalBefore, shaBefore! + 1]);
    }
  });

  it('reports an unreachable Redis as the rate limiter being unavailable', async () => {
    await redis.stop();
    try {
      const error = await stores.admitter
        .admit(key, { requestsPerMinute: 2 }, 0, { ...key, budget, estimateUsd: 1 })
        .then(
          () => undefined,
          (err: unknown) => err,
        );
      expect(error).toBeInstanceOf(AdmissionStoreError);
      expect((error as AdmissionStoreError).store).toBe('rate limiter');
      expect((error as AdmissionStoreError).cause).toBeInstanceOf(StoreUnavailableError);
    } finally {
      await redis.restart();
    }
  });
});
