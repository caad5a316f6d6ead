/**
 * The in-process vector index (the embedded default): one Partition per partition key,
 * bounded by entry count fairly between tenants (TenantBound: a tenant's own cap, then the
 * largest tenant's oldest write goes past the global one). Expired vectors are never
 * returned and are removed by sweep().
 */
import { assertPartition, encodeSegment, partitionTenantSegment } from '../../cache-entries/partition.ts';
import { TenantBound } from '../../tenant-bound.ts';
import { systemClock, type Clock } from '../../types.ts';
import type { VectorHit, VectorIndex, VectorIndexStats } from '../types.ts';
import { Partition } from './partition.ts';
import { DEFAULT_BITS, DEFAULT_TABLES, SimHash } from './simhash.ts';

export interface MemoryVectorIndexOptions {
  clock?: Clock;
  /** Total vectors kept (default 50,000: about 160 MB at 768 floats each). */
  maxEntries?: number;
  /** One tenant's vectors at most (default: maxEntries; largest-first eviction still applies). */
  maxEntriesPerTenant?: number;
  /** SimHash tables and bits per table (defaults 24 × 16). */
  tables?: number;
  bits?: number;
  /**
   * Leading components that find candidates: `half` (default) = the query half of the
   * cache's [q | c]; `all` = the whole vector (for vectors without that layout).
   */
  key?: 'half' | 'all';
}

const globalKey = (partition: string, id: string) => `${partition}\n${id}`;

export class MemoryVectorIndex implements VectorIndex {
  readonly backend = 'memory';
  private readonly partitions = new Map<string, Partition>();
  /** Every vector by its global key. */
  private readonly order = new Map<string, { partition: string; id: string }>();
  /** Who gets evicted: per tenant, oldest write first. */
  private readonly bound: TenantBound;
  private readonly hashers = new Map<number, SimHash>();
  private readonly clock: Clock;
  private readonly tables: number;
  private readonly bits: number;
  private readonly key: 'half' | 'all';

  constructor(opts: MemoryVectorIndexOptions = {}) {
    this.clock = opts.clock ?? systemClock;
    this.bound = new TenantBound({
      maxEntries: opts.maxEntries ?? 50_000,
      maxBytes: Number.POSITIVE_INFINITY,
      maxEntriesPerTenant: opts.maxEntriesPerTenant,
    });
    this.tables = opts.tables ?? DEFAULT_TABLES;
    this.bits = opts.bits ?? DEFAULT_BITS;
    this.key = opts.key ?? 'half';
  }

  private hasher(dim: number): SimHash {
    let h = this.hashers.get(dim);
    if (!h) {
      h = new SimHash(dim, this.tables, this.bits);
      this.hashers.set(dim, h);
    }
    return h;
  }

  async upsert(partition: string, id: string, vector: Float32Array, expiresAt: number): Promise<void> {
    assertPartition(partition);
    if (expiresAt <= this.clock()) {
      this.remove(partition, id);
      return;
    }
    let p = this.partitions.get(partition);
    if (!p) {
      const keyDims = this.key === 'half' ? Math.max(1, Math.floor(vector.length / 2)) : vector.length;
      p = new Partition(this.hasher(keyDims), vector.length);
      this.partitions.set(partition, p);
    }
    p.upsert(id, vector, expiresAt);
    const key = globalKey(partition, id);
    this.order.set(key, { partition, id });
    const tenant = partitionTenantSegment(partition);
    for (const victim of this.bound.added(tenant, key, vector.length * 4)) {
      const v = this.order.get(victim.key);
      if (v) this.remove(v.partition, v.id);
    }
  }

  async search(partition: string, vector: Float32Array, k: number): Promise<VectorHit[]> {
    assertPartition(partition);
    return this.partitions.get(partition)?.search(vector, k, this.clock()) ?? [];
  }

  private remove(partition: string, id: string): boolean {
    const p = this.partitions.get(partition);
    if (!p?.delete(id)) return false;
    const key = globalKey(partition, id);
    this.order.delete(key);
    this.bound.removed(partitionTenantSegment(partition), key);
    if (p.size === 0) this.partitions.delete(partition);
    return true;
  }

  async delete(partition: string, id: string): Promise<boolean> {
    assertPartition(partition);
    return this.remove(partition, id);
  }

  async flush(tenant?: string): Promise<number> {
    const prefix = tenant === undefined ? '' : `${encodeSegment(tenant)}/`;
    let n = 0;
    for (const [name, p] of this.partitions) {
      if (!name.startsWith(prefix)) continue;
      n += p.size;
      this.partitions.delete(name);
    }
    for (const [key, v] of this.order)
      if (v.partition.startsWith(prefix)) {
        this.order.delete(key);
        this.bound.removed(partitionTenantSegment(v.partition), key);
      }
    return n;
  }

  async sweep(): Promise<number> {
    const now = this.clock();
    let n = 0;
    for (const [name, p] of [...this.partitions])
      for (const id of p.expired(now)) if (this.remove(name, id)) n++;
    return n;
  }

  async stats(tenant?: string): Promise<VectorIndexStats> {
    const prefix = tenant === undefined ? '' : `${encodeSegment(tenant)}/`;
    let memoryBytes = 0;
    let entries = 0;
    let partitions = 0;
    for (const [name, p] of this.partitions) {
      if (!name.startsWith(prefix)) continue;
      memoryBytes += p.memoryBytes;
      entries += p.size;
      partitions++;
    }
    return { backend: 'memory', status: 'ok', entries, partitions, memoryBytes };
  }

  async close(): Promise<void> {}
}
