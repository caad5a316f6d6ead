/**
 * Cache entries in Redis, shared by every pod: one string key per entry holding its JSON,
 * with a TTL of `expiresAt` minus the store's clock (PX, not PXAT: a pod whose clock is off
 * from Redis' still gets the TTL it asked for), so Redis drops it by itself. Keys are
 * `<prefix>:{<tenant>}:cache:<format>/<hash>:<id>` — the tenant's hash tag, like every other
 * tenant key. An entry's exact-request digest is a second key,
 * `<prefix>:{<tenant>}:cache-exact:<format>/<hash>:<digest>`, holding the entry id, written in
 * the same MULTI with the same TTL; flush removes both kinds, stats counts entries only, and a
 * digest whose entry is gone (deleted, evicted by maxmemory) reads as a miss. Any failure to reach Redis rejects with StoreUnavailableError (the cache fails
 * open on it); stats() reports it instead.
 */
import type { Redis } from 'ioredis';
import { createRedisClient, toStoreError, type RedisClientOptions } from '../redis/client.ts';
import { systemClock, type Clock } from '../types.ts';
import { assertDigest, assertPartition, encodeSegment, partitionTenantSegment } from './partition.ts';
import type { CacheEntry, CacheEntryStore, CacheStoreStats } from './types.ts';

export interface RedisCacheEntryStoreOptions {
  /** Key namespace (default `gantry`); tests use a fresh one each. */
  prefix?: string;
  clock?: Clock;
}

const SCAN_COUNT = 1000;
const GLOB = /[*?[\]\\]/g;
const escapeGlob = (s: string) => s.replace(GLOB, (c) => `\\${c}`);

export class RedisCacheEntryStore implements CacheEntryStore {
  readonly backend = 'redis';
  private readonly redis: Redis;
  private readonly owned: boolean;
  private readonly prefix: string;
  private readonly clock: Clock;

  /** On an existing client (not closed by close()), or on a client of its own made from options. */
  constructor(client: Redis | RedisClientOptions, opts: RedisCacheEntryStoreOptions = {}) {
    this.owned = !('defineCommand' in client);
    this.redis = this.owned ? createRedisClient(client as RedisClientOptions) : (client as Redis);
    this.prefix = opts.prefix ?? 'gantry';
    this.clock = opts.clock ?? systemClock;
  }

  private key(partition: string, id: string): string {
    assertPartition(partition);
    const tenant = partitionTenantSegment(partition);
    return `${this.prefix}:{${tenant}}:cache:${partition.slice(tenant.length + 1)}:${encodeSegment(id)}`;
  }

  private exactKey(partition: string, digest: string): string {
    assertPartition(partition);
    assertDigest(digest);
    const tenant = partitionTenantSegment(partition);
    return `${this.prefix}:{${tenant}}:cache-exact:${partition.slice(tenant.length + 1)}:${digest}`;
  }

  private async run<T>(operation: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw toStoreError(operation, err);
    }
  }

  async get(partition: string, id: string): Promise<CacheEntry | undefined> {
    const k = this.key(partition, id);
    const raw = await this.run('cacheEntries.get', () => this.redis.get(k));
    if (raw === null) return undefined;
    const entry = JSON.parse(raw) as CacheEntry;
    // Redis expires by its own clock; the store's clock decides too (tests move it).
    return entry.expiresAt > this.clock() ? entry : undefined;
  }

  async put(entry: CacheEntry, exact?: string): Promise<void> {
    const k = this.key(entry.partition, entry.id);
    const x = exact === undefined ? undefined : this.exactKey(entry.partition, exact);
    const ttlMs = Math.ceil(entry.expiresAt - this.clock());
    if (!(ttlMs > 0)) {
      await this.run('cacheEntries.put', () => this.redis.del(k));
      return;
    }
    const json = JSON.stringify(entry);
    if (x === undefined) {
      await this.run('cacheEntries.put', () => this.redis.set(k, json, 'PX', ttlMs));
      return;
    }
    // One MULTI: no pod ever sees the digest before the entry it points at.
    await this.run('cacheEntries.put', async () => {
      const results = await this.redis.multi().set(k, json, 'PX', ttlMs).set(x, entry.id, 'PX', ttlMs).exec();
      const failed = results?.find(([err]) => err);
      if (!results || failed) throw failed?.[0] ?? new Error('transaction aborted');
    });
  }

  async getExact(partition: string, digest: string): Promise<CacheEntry | undefined> {
    const x = this.exactKey(partition, digest);
    const id = await this.run('cacheEntries.getExact', () => this.redis.get(x));
    return id === null ? undefined : this.get(partition, id);
  }

  async delete(partition: string, id: string): Promise<boolean> {
    const k = this.key(partition, id);
    return (await this.run('cacheEntries.delete', () => this.redis.del(k))) > 0;
  }

  private pattern(tenant?: string, kind: 'cache' | 'cache-exact' = 'cache'): string {
    const tag = tenant === undefined ? '*' : escapeGlob(encodeSegment(tenant));
    return `${escapeGlob(this.prefix)}:{${tag}}:${kind}:*`;
  }

  /** Visits the matching keys in batches (SCAN: never blocks Redis the way KEYS would). */
  private async scan(pattern: string, visit: (keys: string[]) => Promise<void>): Promise<void> {
    let cursor = '0';
    do {
      const [next, keys] = await this.redis.scan(cursor, 'MATCH', pattern, 'COUNT', SCAN_COUNT);
      if (keys.length > 0) await visit(keys);
      cursor = next;
    } while (cursor !== '0');
  }

  async flush(tenant?: string): Promise<number> {
    return this.run('cacheEntries.flush', async () => {
      let n = 0;
      await this.scan(this.pattern(tenant), async (keys) => {
        n += await this.redis.unlink(...keys);
      });
      // Digests would only dangle (a miss), but a flush leaves nothing of the tenant behind.
      await this.scan(this.pattern(tenant, 'cache-exact'), async (keys) => {
        await this.redis.unlink(...keys);
      });
      return n;
    });
  }

  async stats(tenant?: string): Promise<CacheStoreStats> {
    try {
      let entries = 0;
      let memoryBytes = 0;
      await this.scan(this.pattern(tenant), async (keys) => {
        const pipe = this.redis.pipeline();
        for (const k of keys) pipe.strlen(k);
        for (const [err, len] of (await pipe.exec()) ?? []) {
          if (err || typeof len !== 'number' || len === 0) continue;
          entries++;
          memoryBytes += len;
        }
      });
      return { backend: 'redis', status: 'ok', entries, memoryBytes };
    } catch (err) {
      const e = toStoreError('cacheEntries.stats', err);
      return { backend: 'redis', status: 'unavailable', entries: 0, memoryBytes: 0, error: e.message };
    }
  }

  async close(): Promise<void> {
    if (this.owned) this.redis.disconnect();
  }
}
