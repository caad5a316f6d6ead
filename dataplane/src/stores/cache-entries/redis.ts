/**
 * Cache entries in Redis, shared by every pod: one string key per entry holding its JSON,
 * with a TTL of `expiresAt` minus the store's clock (PX, not PXAT: a pod whose clock is off
 * from Redis' still gets the TTL it asked for), so Redis drops it by itself. Keys are
 * `<prefix>:{<tenant>}:cache:<format>/<hash>:<id>` — the tenant's hash tag, like every other
 * tenant key. An entry's exact-request digest is a second key,
 * `<prefix>:{<tenant>}:cache-exact:<format>/<hash>:<digest>`, holding the entry id, written in
 * the same script with the same TTL; a digest whose entry is gone (deleted, evicted by
 * maxmemory) reads as a miss.
 *
 * Each tenant's entries are indexed beside them (redis-lua.ts), and a global set names the
 * tenants with an index: stats and flush touch one tenant's own keys, never the keyspace (a
 * SCAN of it cost ~0.4 s of Redis CPU per call at 500k keys, on the Redis the money path uses).
 * Any failure to reach Redis rejects with StoreUnavailableError (the cache fails open on it);
 * stats() reports it instead.
 */
import type { Redis } from 'ioredis';
import { createRedisClient, toStoreError, type RedisClientOptions } from '../redis/client.ts';
import { bindScript, bindVariadicScript, type BoundScript } from '../redis/script.ts';
import { systemClock, type Clock } from '../types.ts';
import { assertDigest, assertPartition, encodeSegment, partitionTenantSegment } from './partition.ts';
import { cacheFlushBatch, cacheForget, cachePut, cacheStats } from './redis-lua.ts';
import type { CacheEntry, CacheEntryStore, CacheStoreStats } from './types.ts';

export interface RedisCacheEntryStoreOptions {
  /** Key namespace (default `gantry`); tests use a fresh one each. */
  prefix?: string;
  clock?: Clock;
}

/** Expired index members a put clears: more than it adds, so a writing tenant's index stays its live entries. */
const REAP_PER_PUT = 64;
/** Expired members one stats step clears; stats repeats the step until none are left. */
const REAP_PER_STATS_STEP = 1000;
/** Members one flush step deletes (each its own script call, so Redis is never held long). */
const FLUSH_BATCH = 500;

/** A tenant's bookkeeping keys and the base its members hang off. */
interface TenantKeys {
  base: string;
  index: string;
  sizes: string;
  totals: string;
}

export class RedisCacheEntryStore implements CacheEntryStore {
  readonly backend = 'redis';
  private readonly redis: Redis;
  private readonly owned: boolean;
  private readonly prefix: string;
  private readonly clock: Clock;
  private readonly scripts: { put: BoundScript; forget: BoundScript; stats: BoundScript; flush: BoundScript };

  /** On an existing client (not closed by close()), or on a client of its own made from options. */
  constructor(client: Redis | RedisClientOptions, opts: RedisCacheEntryStoreOptions = {}) {
    this.owned = !('defineCommand' in client);
    this.redis = this.owned ? createRedisClient(client as RedisClientOptions) : (client as Redis);
    this.prefix = opts.prefix ?? 'gantry';
    this.clock = opts.clock ?? systemClock;
    this.scripts = {
      put: bindVariadicScript(this.redis, cachePut, 'cacheEntries.put'),
      forget: bindScript(this.redis, cacheForget, 'cacheEntries.delete'),
      stats: bindScript(this.redis, cacheStats, 'cacheEntries.stats'),
      flush: bindVariadicScript(
        this.redis,
        { ...cacheFlushBatch, maxKeys: FLUSH_BATCH + 3 },
        'cacheEntries.flush',
      ),
    };
  }

  /** The global set of tenant segments with bookkeeping (outside every tenant's slot). */
  private get tenantsKey(): string {
    return `${this.prefix}:cache-tenants`;
  }

  private tenantKeys(segment: string): TenantKeys {
    const base = `${this.prefix}:{${segment}}`;
    return {
      base,
      index: `${base}:cache-index`,
      sizes: `${base}:cache-sizes`,
      totals: `${base}:cache-totals`,
    };
  }

  /** An entry's member (its key below the tenant's base). */
  private member(partition: string, id: string): { segment: string; member: string } {
    assertPartition(partition);
    const segment = partitionTenantSegment(partition);
    return { segment, member: `cache:${partition.slice(segment.length + 1)}:${encodeSegment(id)}` };
  }

  private key(partition: string, id: string): string {
    const { segment, member } = this.member(partition, id);
    return `${this.tenantKeys(segment).base}:${member}`;
  }

  private exactMember(partition: string, digest: string): string {
    assertPartition(partition);
    assertDigest(digest);
    const tenant = partitionTenantSegment(partition);
    return `cache-exact:${partition.slice(tenant.length + 1)}:${digest}`;
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
    const { segment, member } = this.member(entry.partition, entry.id);
    const x = exact === undefined ? undefined : this.exactMember(entry.partition, exact);
    const t = this.tenantKeys(segment);
    const now = this.clock();
    const ttlMs = Math.ceil(entry.expiresAt - now);
    if (!(ttlMs > 0)) {
      await this.forget(t, member);
      return;
    }
    const keys = [t.index, t.sizes, t.totals, `${t.base}:${member}`];
    const args: (string | number)[] = [
      now,
      ttlMs,
      entry.expiresAt,
      JSON.stringify(entry),
      member,
      REAP_PER_PUT,
    ];
    // One script: no pod ever sees the digest before the entry it points at.
    if (x !== undefined) {
      keys.push(`${t.base}:${x}`);
      args.push(x, entry.id);
    }
    // The tenant is named in the global set on every put, not only on its first entry: a name
    // lost (a failed SADD, a pod gone between the two commands, a set deleted) comes back with
    // the tenant's next put, where otherwise all-tenants stats and flush would miss the tenant
    // for good. Sent first and without waiting: both go out together, one round trip.
    const named = this.run('cacheEntries.put', () => this.redis.sadd(this.tenantsKey, segment));
    const stored = this.scripts.put(keys, args);
    await Promise.all([named, stored]);
  }

  async getExact(partition: string, digest: string): Promise<CacheEntry | undefined> {
    const x = `${this.tenantKeys(partitionTenantSegment(partition)).base}:${this.exactMember(partition, digest)}`;
    const id = await this.run('cacheEntries.getExact', () => this.redis.get(x));
    return id === null ? undefined : this.get(partition, id);
  }

  async delete(partition: string, id: string): Promise<boolean> {
    const { segment, member } = this.member(partition, id);
    return this.forget(this.tenantKeys(segment), member);
  }

  private async forget(t: TenantKeys, member: string): Promise<boolean> {
    const n = await this.scripts.forget([t.index, t.sizes, t.totals, `${t.base}:${member}`], [member]);
    return n === 1;
  }

  /** One tenant's segment, or every tenant with bookkeeping. */
  private async segments(tenant?: string): Promise<string[]> {
    if (tenant !== undefined) return [encodeSegment(tenant)];
    return this.redis.smembers(this.tenantsKey);
  }

  async flush(tenant?: string): Promise<number> {
    return this.run('cacheEntries.flush', async () => {
      let n = 0;
      for (const segment of await this.segments(tenant))
        n += await this.flushTenant(this.tenantKeys(segment));
      return n;
    });
  }

  /**
   * Deletes what the tenant's index names, a batch per step. Steps are bounded by the index's
   * size when the flush began: entries written while it runs may outlive it, as they would
   * had they come just after.
   */
  private async flushTenant(t: TenantKeys): Promise<number> {
    let n = 0;
    const steps = Math.ceil((await this.redis.zcard(t.index)) / FLUSH_BATCH) + 1;
    for (let i = 0; i < steps; i++) {
      const members = await this.redis.zrange(t.index, 0, FLUSH_BATCH - 1);
      if (members.length === 0) break;
      const keys = [t.index, t.sizes, t.totals, ...members.map((m) => `${t.base}:${m}`)];
      n += Number(await this.scripts.flush(keys, members));
    }
    return n;
  }

  async stats(tenant?: string): Promise<CacheStoreStats> {
    try {
      let entries = 0;
      let memoryBytes = 0;
      for (const segment of await this.segments(tenant)) {
        const totals = await this.tenantStats(this.tenantKeys(segment));
        entries += totals.entries;
        memoryBytes += totals.bytes;
      }
      return { backend: 'redis', status: 'ok', entries, memoryBytes };
    } catch (err) {
      const e = toStoreError('cacheEntries.stats', err);
      return { backend: 'redis', status: 'unavailable', entries: 0, memoryBytes: 0, error: e.message };
    }
  }

  /** The tenant's totals once what expired is off them (usually one step: puts keep the backlog small). */
  private async tenantStats(t: TenantKeys): Promise<{ entries: number; bytes: number }> {
    for (;;) {
      const [reaped, entries, bytes] = (await this.scripts.stats(
        [t.index, t.sizes, t.totals],
        [this.clock(), REAP_PER_STATS_STEP],
      )) as [number, number, number];
      if (reaped < REAP_PER_STATS_STEP) return { entries, bytes };
    }
  }

  async close(): Promise<void> {
    if (this.owned) this.redis.disconnect();
  }
}
