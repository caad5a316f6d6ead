/**
 * In-process cache entries (the embedded default). Entries are kept as JSON text: a caller
 * can never mutate a stored entry, and the byte count is exact. Bounded by entry count and
 * bytes, fairly between tenants (TenantBound): past a tenant's own cap its oldest write
 * goes, past the global cap the largest tenant's oldest write. Expired entries are dropped
 * when read, from the front of the write order on each put, and all at once by stats().
 * An entry's exact-request digest lives in a map beside it, counted in the entry's bytes and
 * dropped with it, so the digests are bounded exactly like the entries.
 */
import { TenantBound } from '../tenant-bound.ts';
import { systemClock, type Clock } from '../types.ts';
import { assertDigest, assertPartition, encodeSegment, partitionTenantSegment } from './partition.ts';
import type { CacheEntry, CacheEntryStore, CacheStoreStats } from './types.ts';

export interface MemoryCacheEntryStoreOptions {
  clock?: Clock;
  maxEntries?: number;
  maxBytes?: number;
  /** One tenant's share at most (defaults: the global bounds; largest-first eviction still applies). */
  maxEntriesPerTenant?: number;
  maxBytesPerTenant?: number;
}

interface Stored {
  json: string;
  expiresAt: number;
  /** UTF-16 length × 2: what the string costs in memory. */
  bytes: number;
  /** Percent-encoded tenant segment of the partition. */
  tenant: string;
  partition: string;
  /** Key of this entry's exact-request digest in `exact`, if it has one. */
  exact: string | undefined;
}

const key = (partition: string, id: string) => `${partition}\n${id}`;
const SWEEP_PER_PUT = 8;

export class MemoryCacheEntryStore implements CacheEntryStore {
  readonly backend = 'memory';
  private readonly entries = new Map<string, Stored>();
  /** Exact-request digest key → id of the entry it points at (same partition). */
  private readonly exact = new Map<string, string>();
  private readonly bound: TenantBound;
  private readonly clock: Clock;

  constructor(opts: MemoryCacheEntryStoreOptions = {}) {
    this.clock = opts.clock ?? systemClock;
    this.bound = new TenantBound({
      maxEntries: opts.maxEntries ?? 100_000,
      maxBytes: opts.maxBytes ?? 256 * 1024 * 1024,
      maxEntriesPerTenant: opts.maxEntriesPerTenant,
      maxBytesPerTenant: opts.maxBytesPerTenant,
    });
  }

  private remove(k: string, s: Stored): void {
    this.forget(k, s);
    this.bound.removed(s.tenant, k);
  }

  /** Drops the entry and its digest (unless a newer entry took the digest over). */
  private forget(k: string, s: Stored): void {
    this.entries.delete(k);
    if (s.exact !== undefined && key(s.partition, this.exact.get(s.exact) ?? '') === k)
      this.exact.delete(s.exact);
  }

  async get(partition: string, id: string): Promise<CacheEntry | undefined> {
    assertPartition(partition);
    const k = key(partition, id);
    const s = this.entries.get(k);
    if (!s) return undefined;
    if (s.expiresAt <= this.clock()) {
      this.remove(k, s);
      return undefined;
    }
    return JSON.parse(s.json) as CacheEntry;
  }

  async put(entry: CacheEntry, exact?: string): Promise<void> {
    assertPartition(entry.partition);
    const now = this.clock();
    const k = key(entry.partition, entry.id);
    const old = this.entries.get(k);
    if (old) this.remove(k, old);
    if (entry.expiresAt <= now) return;
    if (exact !== undefined) assertDigest(exact);
    const json = JSON.stringify(entry);
    const tenant = partitionTenantSegment(entry.partition);
    const exactKey = exact === undefined ? undefined : key(entry.partition, exact);
    const bytes = (json.length + (exactKey?.length ?? 0) + entry.id.length) * 2;
    const s: Stored = {
      json,
      expiresAt: entry.expiresAt,
      bytes,
      tenant,
      partition: entry.partition,
      exact: exactKey,
    };
    this.entries.set(k, s);
    // The newest answer to an exact request wins: the one before it stays reachable by meaning.
    if (exactKey !== undefined) this.exact.set(exactKey, entry.id);
    for (const victim of this.bound.added(tenant, k, s.bytes)) {
      const v = this.entries.get(victim.key);
      if (v) this.forget(victim.key, v);
    }
    this.sweep(now);
  }

  async getExact(partition: string, digest: string): Promise<CacheEntry | undefined> {
    assertPartition(partition);
    assertDigest(digest);
    const id = this.exact.get(key(partition, digest));
    return id === undefined ? undefined : this.get(partition, id);
  }

  /** Drops a few expired entries from the front of the write order. */
  private sweep(now: number): void {
    let swept = 0;
    for (const [k, s] of this.entries) {
      if (swept >= SWEEP_PER_PUT || s.expiresAt > now) break;
      swept++;
      this.remove(k, s);
    }
  }

  async delete(partition: string, id: string): Promise<boolean> {
    assertPartition(partition);
    const k = key(partition, id);
    const s = this.entries.get(k);
    if (!s) return false;
    this.remove(k, s);
    return s.expiresAt > this.clock();
  }

  async flush(tenant?: string): Promise<number> {
    const prefix = tenant === undefined ? '' : `${encodeSegment(tenant)}/`;
    const now = this.clock();
    let n = 0;
    for (const [k, s] of this.entries) {
      if (!k.startsWith(prefix)) continue;
      this.remove(k, s);
      if (s.expiresAt > now) n++;
    }
    return n;
  }

  async stats(tenant?: string): Promise<CacheStoreStats> {
    const now = this.clock();
    for (const [k, s] of this.entries) if (s.expiresAt <= now) this.remove(k, s);
    const usage = this.bound.usage(tenant === undefined ? undefined : encodeSegment(tenant));
    return { backend: 'memory', status: 'ok', entries: usage.entries, memoryBytes: usage.bytes };
  }

  async close(): Promise<void> {}
}
