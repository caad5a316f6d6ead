/**
 * Redis-only behaviour of the usage store: key layout, and a private real redis-server stopped
 * and frozen mid-run — queries and records fail fast with StoreUnavailableError, the retrying
 * recorder catches up afterwards, and a record whose reply was lost is not counted twice; and,
 * on the shared server, expiries written once per cell and indexes rebuilt after eviction.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { startRedis, testRedisUrl, type RedisInstance } from '../../../../test/harness/redis.ts';
import type { UsageStore } from '../../accounting/usage.ts';
import { StoreUnavailableError } from '../errors.ts';
import { createRedisClient, waitForReady } from '../redis/client.ts';
import { KeySpace } from '../redis/keys.ts';
import { cellMember, securityField } from './accumulate.ts';
import { T0, usageRecord as rec } from './fixtures.ts';
import { createRedisUsageStore } from './index.ts';
import { UsageKeys } from './keys.ts';
import { RetryingUsageRecorder } from './retrying.ts';

const MARCH = { tenant: 'acme', from: '2025-03-01', to: '2025-03-31' };

describe('UsageKeys', () => {
  const keys = new UsageKeys(new KeySpace('gantry'));

  it('keeps every per-tenant key in the tenant slot and names cells injectively', () => {
    const member = cellMember({ keyId: 'ns/k', model: 'a:b', provider: 'openai' });
    const all = [
      keys.seen('acme', 'r1'),
      keys.cell('acme', '2025-03-14', member),
      keys.cells('acme', '2025-03-14'),
      keys.days('acme'),
      keys.index('acme', 'keys'),
      keys.index('acme', 'models'),
      keys.index('acme', 'providers'),
      keys.log('acme'),
      keys.security('acme', '2025-03-14'),
    ];
    for (const name of all) expect(name.match(/\{[^}]*\}/g)).toEqual(['{acme}']);
    expect(new Set(all).size).toBe(all.length);
    expect(keys.tenants()).toBe('gantry:usage:tenants');
    expect(member).not.toBe(cellMember({ keyId: 'ns/k:a', model: 'b', provider: 'openai' }));
    expect(securityField({ guardrail: 'a:b', category: 'c', action: 'block' })).not.toBe(
      securityField({ guardrail: 'a', category: 'b:c', action: 'block' }),
    );
  });
});

describe('redis usage store when Redis is unavailable', () => {
  let redis: RedisInstance;
  let client: ReturnType<typeof createRedisClient>;
  let usage: UsageStore;

  beforeAll(async () => {
    redis = await startRedis();
    client = createRedisClient({ url: redis.url, commandTimeoutMs: 300, connectTimeoutMs: 300 });
    await waitForReady(client);
    usage = createRedisUsageStore(client, new KeySpace('u'), { clock: () => T0 });
  });

  afterAll(async () => {
    client?.disconnect();
    await redis?.stop();
  });

  it('rejects at once with StoreUnavailableError while the server is down, then recovers', async () => {
    expect(await usage.record(rec())).toBe(true);
    await redis.stop();
    const ops: Record<string, () => Promise<unknown>> = {
      'usage.record': () => usage.record(rec()),
      'usage.rollups': () => usage.rollups(MARCH),
      'usage.logs': () => usage.logs({ ...MARCH, limit: 5 }),
      'usage.security': () => usage.security(MARCH),
      'usage.dimensions': () => usage.dimensions('acme'),
      'usage.tenants': () => usage.tenants(),
    };
    for (const [name, op] of Object.entries(ops)) {
      const start = performance.now();
      const error = await op().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error, name).toBeInstanceOf(StoreUnavailableError);
      expect((error as StoreUnavailableError).operation, name).toBe(name);
      expect(performance.now() - start, name).toBeLessThan(250);
    }
    await redis.restart();
    await waitForReady(client, 5000);
    // The restarted server lost its data and its script cache; both are fine.
    expect(await usage.record(rec())).toBe(true);
    expect((await usage.rollups(MARCH))[0]?.requests).toBe(1);
  });

  it('catches up after an outage through the retrying recorder', async () => {
    const tenant = 'outage';
    const recorder = new RetryingUsageRecorder(usage, { retryMs: 50 });
    await redis.stop();
    const records = Array.from({ length: 20 }, (_, i) => rec({ tenant, costUsd: 0.000101 * (i + 1) }));
    for (const r of records) recorder.record(r);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(recorder.pending).toBe(20);
    await redis.restart();
    await waitForReady(client, 5000);
    await recorder.close();
    expect(recorder.pending).toBe(0);
    expect(recorder.dropped).toBe(0);
    const [row] = await usage.rollups({ ...MARCH, tenant });
    expect(row?.requests).toBe(20);
    expect(row?.costUsd).toBe(0.02121); // 0.000101 × (1 + … + 20)
  });

  it('does not count twice a record whose reply was lost (hung server) when it is retried', async () => {
    const tenant = 'hung';
    let duplicates = 0;
    const counting: UsageStore = {
      record: async (r) => {
        const applied = await usage.record(r);
        if (!applied) duplicates++;
        return applied;
      },
      rollups: (q) => usage.rollups(q),
      logs: (q) => usage.logs(q),
      security: (q) => usage.security(q),
      dimensions: (t) => usage.dimensions(t),
      tenants: () => usage.tenants(),
    };
    const recorder = new RetryingUsageRecorder(counting, { retryMs: 50 });
    redis.pause();
    const records = Array.from({ length: 5 }, () => rec({ tenant, costUsd: 0.5 }));
    try {
      for (const r of records) recorder.record(r);
      // Every write times out; the server got the commands and runs them once it is thawed.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(recorder.pending).toBeGreaterThan(0);
    } finally {
      redis.resume();
    }
    await waitForReady(client, 5000);
    await recorder.close();
    expect(recorder.pending).toBe(0);
    // The scripts ran when the server thawed; their retries found them done.
    expect(duplicates).toBe(5);
    const [row] = await usage.rollups({ ...MARCH, tenant });
    expect(row?.requests).toBe(5);
    expect(row?.costUsd).toBe(2.5);
  });
});

describe('redis usage store: indexes and expiries', () => {
  it('indexes every cell and sets every expiry once, when a record creates its cell', async () => {
    const client = new Redis(testRedisUrl());
    const prefix = `uidx-${Date.now()}`;
    const usage = createRedisUsageStore(client, new KeySpace(prefix), {
      clock: () => T0,
      retentionDays: 10,
      logLimit: 3,
    });
    const keys = new UsageKeys(new KeySpace(prefix));
    try {
      const retention = 10 * 86_400;
      const day = '2025-03-14';
      await usage.record(rec({ model: 'a' }));
      const cellA = keys.cell(
        'acme',
        day,
        cellMember({ keyId: 'default/acme-ci', model: 'a', provider: 'openai' }),
      );
      const ttlAfterFirst = await client.ttl(cellA);
      // A day beyond the retention: the cell is written at most until its day ends.
      expect(ttlAfterFirst).toBeGreaterThan(retention);
      expect(ttlAfterFirst).toBeLessThanOrEqual(retention + 86_400);
      // Lower the expiry: a record into the same cell leaves it alone (it does not write it again).
      await client.expire(cellA, 1000);
      for (const model of ['a', 'a', 'b']) await usage.record(rec({ model }));
      expect(await client.ttl(cellA)).toBeLessThanOrEqual(1000);
      expect(await usage.dimensions('acme')).toEqual({
        keys: ['default/acme-ci'],
        models: ['a', 'b'],
        providers: ['openai'],
      });
      expect((await client.smembers(keys.cells('acme', day))).length).toBe(2);
      for (const k of [
        keys.cells('acme', day),
        keys.days('acme'),
        keys.index('acme', 'models'),
        keys.log('acme'),
      ])
        expect(await client.ttl(k), k).toBeGreaterThan(retention);
      // The log is kept at its limit, newest first.
      expect(await client.llen(keys.log('acme'))).toBe(3);
      const rows = await usage.rollups({ tenant: 'acme', from: day, to: day });
      expect(rows.map((r) => [r.model, r.requests])).toEqual([
        ['a', 3],
        ['b', 1],
      ]);
    } finally {
      client.disconnect();
    }
  });

  it('rebuilds indexes an evicting policy dropped, with expiries, from the next record', async () => {
    const client = new Redis(testRedisUrl());
    const prefix = `urepair-${Date.now()}`;
    const usage = createRedisUsageStore(client, new KeySpace(prefix), {
      clock: () => T0,
      retentionDays: 10,
    });
    const keys = new UsageKeys(new KeySpace(prefix));
    try {
      const day = '2025-03-14';
      await usage.record(rec({ model: 'a', costUsd: 1 }));
      const indexes = [
        keys.cells('acme', day),
        keys.days('acme'),
        keys.index('acme', 'keys'),
        keys.index('acme', 'models'),
        keys.index('acme', 'providers'),
        keys.log('acme'),
      ];
      // What an allkeys-lru policy may do: the indexes go, the cell holding the data stays.
      expect(await client.del(...indexes)).toBe(indexes.length);
      await usage.record(rec({ model: 'a', costUsd: 1 }));
      const rows = await usage.rollups({ tenant: 'acme', from: day, to: day });
      expect(rows.map((r) => [r.model, r.requests, r.costUsd])).toEqual([['a', 2, 2]]);
      expect(await usage.dimensions('acme')).toEqual({
        keys: ['default/acme-ci'],
        models: ['a'],
        providers: ['openai'],
      });
      // Re-created keys expire like the originals rather than living for ever.
      for (const k of indexes) expect(await client.ttl(k), k).toBeGreaterThan(10 * 86_400);
    } finally {
      client.disconnect();
    }
  });
});
