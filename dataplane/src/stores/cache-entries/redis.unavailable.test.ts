/**
 * Redis going away mid-run, against a private redis-server: every cache entry operation
 * rejects quickly with StoreUnavailableError (the cache fails open on it), stats() reports
 * it, and the store works again once Redis is back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis, type RedisInstance } from '../../../../test/harness/redis.ts';
import { StoreUnavailableError } from '../errors.ts';
import { createRedisClient, waitForReady } from '../redis/client.ts';
import { partitionKey } from './partition.ts';
import { RedisCacheEntryStore } from './redis.ts';
import type { CacheEntry } from './types.ts';

const P = partitionKey('acme', 'openai', 'shape');
const entry = (): CacheEntry => ({
  id: 'e1',
  partition: P,
  createdAt: Date.now(),
  expiresAt: Date.now() + 60_000,
  query: 'q',
  response: { id: 'x', object: 'chat.completion', created: 0, model: 'm', choices: [] },
  promptTokens: 1,
  completionTokens: 1,
  maxTokens: undefined,
  meta: undefined,
});

async function timed(p: Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const start = performance.now();
  try {
    await p;
    return { error: undefined, ms: performance.now() - start };
  } catch (error) {
    return { error, ms: performance.now() - start };
  }
}

describe('redis cache entries when Redis is unavailable', () => {
  let redis: RedisInstance;
  let store: RedisCacheEntryStore;
  const client = () => createRedisClient({ url: redis.url, commandTimeoutMs: 300, connectTimeoutMs: 300 });
  let raw: ReturnType<typeof client>;

  beforeAll(async () => {
    redis = await startRedis();
    raw = client();
    await waitForReady(raw);
    store = new RedisCacheEntryStore(raw, { prefix: 'u' });
  });

  afterAll(async () => {
    raw?.disconnect();
    await redis?.stop();
  });

  it('rejects every operation at once while the server is down, then recovers', async () => {
    await store.put(entry());
    await redis.stop();
    const operations = {
      'cacheEntries.get': () => store.get(P, 'e1'),
      'cacheEntries.put': () => store.put(entry()),
      'cacheEntries.delete': () => store.delete(P, 'e1'),
      'cacheEntries.flush': () => store.flush(),
    };
    for (const [name, op] of Object.entries(operations)) {
      const { error, ms } = await timed(op());
      expect(error, name).toBeInstanceOf(StoreUnavailableError);
      expect((error as StoreUnavailableError).operation, name).toBe(name);
      expect(ms, name).toBeLessThan(250);
    }
    expect(await store.stats()).toMatchObject({ backend: 'redis', status: 'unavailable', entries: 0 });
    await redis.restart();
    await waitForReady(raw, 5000);
    expect(await store.get(P, 'e1')).toBeUndefined();
    await store.put(entry());
    expect((await store.get(P, 'e1'))?.id).toBe('e1');
  });

  it('times out on a hung server', async () => {
    redis.pause();
    try {
      const { error, ms } = await timed(store.get(P, 'e1'));
      expect(error).toBeInstanceOf(StoreUnavailableError);
      expect(ms).toBeLessThan(1000);
    } finally {
      redis.resume();
    }
  });
});
