/**
 * In-process cache entries (the embedded default). Entries are kept as JSON text: a caller
 * can never mutate a stored entry, and the byte count is exact. Bounded by entry count and
 * bytes; past either, the oldest writes go first. Expired entries are dropped when read,
 * from the front of the write order on each put, and all at once by stats().
 */
import { systemClock, type Clock } from '../types.ts';
import { assertPartition, encodeSegment } from './partition.ts';
import type { CacheEntry, CacheEntryStore, CacheStoreStats } from './types.ts';

export interface MemoryCacheEntryStoreOptions {
  clock?: Clock;
  maxEntries?: number;
  maxBytes?: number;
}

interface Stored {
  json: string;
  expiresAt: number;
  /** UTF-16 length × 2: what the string costs in memory. */
  bytes: number;
}

const key = (partition: string, id: string) => `${partition}\n${id}`;
const SWEEP_PER_PUT = 8;

export class MemoryCacheEntryStore implements CacheEntryStore {
  readonly backend = 'memory';
  private readonly entries = new Map<string, Stored>();
  private bytes = 0;
  private readonly clock: Clock;
  private readonly maxEntries: number;
  private readonly maxBytes: number;

  constructor(opts: MemoryCacheEntryStoreOptions = {}) {
    this.clock = opts.clock ?? systemClock;
    this.maxEntries = opts.maxEntries ?? 100_000;
    this.maxBytes = opts.maxBytes ?? 256 * 1024 * 1024;
  }

  private remove(k: string, s: Stored): void {
    this.entries.delete(k);
    this.bytes -= s.bytes;
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
    const s: Stored = { json, expiresAt: entry.expiresAt, bytes: json.length * 2 };
    this.entries.set(k, s);
    this.bytes += s.bytes;
    this.evict(now);
  }

  /** Drops expired entries at the front, then the oldest while over a bound (never the newest). */
  private evict(now: number): void {
    let swept = 0;
    for (const [k, s] of this.entries) {
      const over = this.entries.size > this.maxEntries || this.bytes > this.maxBytes;
      const expired = swept < SWEEP_PER_PUT && s.expiresAt <= now;
      if ((!over && !expired) || this.entries.size === 1) break;
      if (expired) swept++;
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

  async stats(): Promise<CacheStoreStats> {
    const now = this.clock();
    for (const [k, s] of this.entries) if (s.expiresAt <= now) this.remove(k, s);
    return { backend: 'memory', status: 'ok', entries: this.entries.size, memoryBytes: this.bytes };
  }

  async close(): Promise<void> {}
}
