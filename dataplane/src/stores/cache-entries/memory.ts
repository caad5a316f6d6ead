/**
 * In-process cache entries (the embedded default). Entries are kept as JSON text: a caller
 * can never mutate a stored entry, and the byte count is exact. Bounded by entry count and
 * bytes, fairly between tenants (TenantBound): past a tenant's own cap its oldest write
 * goes, past the global cap the largest tenant's oldest write. Expired entries are dropped
 * when read, from the front of the write order on each put, and all at once by stats().
 */
import { TenantBound } from '../tenant-bound.ts';
import { systemClock, type Clock } from '../types.ts';
import { assertPartition, encodeSegment, partitionTenantSegment } from './partition.ts';
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
}

const key = (partition: string, id: string) => `${partition}\n${id}`;
const SWEEP_PER_PUT = 8;

export class MemoryCacheEntryStore implements CacheEntryStore {
  readonly backend = 'memory';
  private readonly entries = new Map<string, Stored>();
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
    this.entries.delete(k);
    this.bound.removed(s.tenant, k);
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

  async put(entry: CacheEntry): Promise<void> {
    assertPartition(entry.partition);
    const now = this.clock();
    const k = key(entry.partition, entry.id);
    const old = this.entries.get(k);
    if (old) this.remove(k, old);
    if (entry.expiresAt <= now) return;
    const json = JSON.stringify(entry);
    const tenant = partitionTenantSegment(entry.partition);
    const s: Stored = { json, expiresAt: entry.expiresAt, bytes: json.length * 2, tenant };
    this.entries.set(k, s);
    for (const victim of this.bound.added(tenant, k, s.bytes)) this.entries.delete(victim.key);
    this.sweep(now);
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
