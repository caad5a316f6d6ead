/**
 * What a tenant admin's `/api/v1/cache/stats` and `/api/v1/cache/flush` cost Redis. They used to
 * SCAN the whole keyspace (every tenant's keys, 1,000 per call: 500 SCANs and ~0.4 s of Redis
 * CPU per request at 500k keys, on the Redis the money path uses). They now read and delete by
 * the tenant's own index: the commands Redis runs (INFO commandstats, which also counts the
 * commands scripts run) are the same few whether Redis holds a thousand other keys or fifty
 * thousand. A private server, so the counters see only this test's traffic.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { partitionKey } from '../../dataplane/src/stores/cache-entries/partition.ts';
import { RedisCacheEntryStore } from '../../dataplane/src/stores/cache-entries/redis.ts';
import type { CacheEntry } from '../../dataplane/src/stores/cache-entries/types.ts';
import { startRedis, type RedisInstance } from '../harness/redis.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const ADMIN = 'sk-acme-admin-cache-cost';
const PLATFORM = 'sk-platform-cache-cost-0123456789abcdef0123';
const PREFIX = `cache-cost-${randomUUID()}`;
const ACME_ENTRIES = 5;

let redis: RedisInstance;
let stack: Stack;
let raw: Redis;
let entries: RedisCacheEntryStore;

beforeAll(async () => {
  redis = await startRedis();
  stack = await startStack(
    ([url]) =>
      [
        deployment({ name: 'gpt-test', model: 'gpt-test', baseUrl: fakeBase(url!) }),
        tenant('acme'),
        tenant('globex'),
        apiKey('acme-admin', ADMIN, 'acme', { role: 'admin' }),
      ].join(''),
    {
      redisUrl: redis.url,
      redisPrefix: PREFIX,
      env: { FAKE_PROVIDER_KEY: 'sk-fake', GANTRY_ADMIN_KEY: PLATFORM },
    },
  );
  raw = new Redis(redis.url);
  // The gateway's own store code, on the gateway's keys: entries as a cache miss writes them.
  entries = new RedisCacheEntryStore(raw, { prefix: PREFIX });
}, 60_000);
afterAll(async () => {
  await entries?.close();
  raw?.disconnect();
  await stack?.close();
  await redis?.stop();
});

function entry(tenantName: string, id: string): CacheEntry {
  return {
    id,
    partition: partitionKey(tenantName, 'openai', 'shape'),
    createdAt: Date.now(),
    expiresAt: Date.now() + 3_600_000,
    query: `question ${id}`,
    response: {
      id: `chatcmpl-${id}`,
      object: 'chat.completion',
      created: 0,
      model: 'gpt-test',
      choices: [{ index: 0, message: { role: 'assistant', content: 'answer' }, finish_reason: 'stop' }],
    },
    promptTokens: 3,
    completionTokens: 1,
    maxTokens: undefined,
    meta: undefined,
  };
}

/** Fills Redis with `n` more keys of another tenant (what every other tenant's traffic leaves). */
async function growKeyspace(n: number): Promise<void> {
  const start = await raw.dbsize();
  for (let i = 0; i < n; i += 5000) {
    const p = raw.pipeline();
    for (let j = i; j < Math.min(n, i + 5000); j++)
      p.set(`${PREFIX}:{globex}:cache:openai/shape:filler-${start + j}`, '{}', 'EX', 3600);
    await p.exec();
  }
}

/** Commands Redis ran (scripts' inner commands included) during `fn`, by name. */
async function commandsDuring(fn: () => Promise<void>): Promise<Record<string, number>> {
  await raw.config('RESETSTAT');
  await fn();
  const info = await raw.info('commandstats');
  const calls: Record<string, number> = {};
  for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    const name = m[1]!;
    // The measuring itself.
    if (name === 'config|resetstat' || name === 'info') continue;
    calls[name] = Number(m[2]);
  }
  return calls;
}

const total = (calls: Record<string, number>) => Object.values(calls).reduce((a, b) => a + b, 0);

const stats = async () => {
  const res = await fetch(`${stack.gateway.url}/api/v1/cache/stats`, {
    headers: { authorization: `Bearer ${ADMIN}` },
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { entries: number };
};
const flush = async () => {
  const res = await fetch(`${stack.gateway.url}/api/v1/cache/flush`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}` },
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { entries_deleted: number };
};

const fillAcme = async () => {
  for (let i = 0; i < ACME_ENTRIES; i++) await entries.put(entry('acme', `a${i}`));
};

describe("a tenant admin's cache stats and flush on a shared Redis", () => {
  it('run the same few commands however many keys other tenants hold', async () => {
    await fillAcme();
    await growKeyspace(1_000);
    // The gateway's first call loads its script (EVAL rather than EVALSHA): not what is compared.
    await stats();
    let answer: { entries: number } | undefined;
    const small = await commandsDuring(async () => {
      answer = await stats();
    });
    expect(answer?.entries).toBe(ACME_ENTRIES);

    await growKeyspace(50_000);
    const large = await commandsDuring(async () => {
      answer = await stats();
    });
    expect(answer?.entries).toBe(ACME_ENTRIES);
    expect(large.scan).toBeUndefined();
    expect(large).toEqual(small);
    // One script: reap what expired (nothing), read the totals.
    expect(total(large)).toBeLessThanOrEqual(6);
  });

  it('flush deletes the tenant’s entries by its index, not by walking the keyspace', async () => {
    let flushed: { entries_deleted: number } | undefined;
    const calls = await commandsDuring(async () => {
      flushed = await flush();
    });
    expect(flushed?.entries_deleted).toBe(ACME_ENTRIES);
    expect(calls.scan).toBeUndefined();
    // The entries themselves, then the bookkeeping, in one batch: nothing proportional to the keyspace.
    expect(calls.unlink).toBe(ACME_ENTRIES);
    expect(total(calls)).toBeLessThan(40);
    expect(await raw.keys(`${PREFIX}:{acme}:*`)).toEqual([]);
    expect((await stats()).entries).toBe(0);
    // Another tenant's keys are untouched.
    expect(await raw.dbsize()).toBeGreaterThanOrEqual(51_000);
  });
});
