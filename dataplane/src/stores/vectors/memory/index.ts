/**
 * The in-process vector index (the embedded default): one Partition per partition key,
 * bounded by a total entry count (the oldest write goes first past it). Expired vectors are
 * never returned and are removed by sweep().
 */
import { assertPartition, encodeSegment } from '../../cache-entries/partition.ts';
import { systemClock, type Clock } from '../../types.ts';
import type { VectorHit, VectorIndex, VectorIndexStats } from '../types.ts';
import { Partition } from './partition.ts';
import { DEFAULT_BITS, DEFAULT_TABLES, SimHash } from './simhash.ts';

export interface MemoryVectorIndexOptions {
  clock?: Clock;
  /** Total vectors kept (default 50,000: about 160 MB at 768 floats each). */
  maxEntries?: number;
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
  /** Every vector, oldest write first: the eviction order. */
  private readonly order = new Map<string, { partition: string; id: string }>();
  private readonly hashers = new Map<number, SimHash>();
  private readonly clock: Clock;
  private readonly maxEntries: number;
  private readonly tables: number;
  private readonly bits: number;
  private readonly key: 'half' | 'all';

  constructor(opts: MemoryVectorIndexOptions = {}) {
    this.clock = opts.clock ?? systemClock;
    this.maxEntries = opts.maxEntries ?? 50_000;
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
    this.order.delete(key);
    this.order.set(key, { partition, id });
    for (const [, oldest] of this.order) {
      if (this.order.size <= this.maxEntries) break;
      this.remove(oldest.partition, oldest.id);
    }
  }

  async search(partition: string, vector: Float32Array, k: number): Promise<VectorHit[]> {
    assertPartition(partition);
    return this.partitions.get(partition)?.search(vector, k, this.clock()) ?? [];
  }

  private remove(partition: string, id: string): boolean {
    const p = this.partitions.get(partition);
    if (!p?.delete(id)) return false;
    this.order.delete(globalKey(partition, id));
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
    for (const [key, v] of this.order) if (v.partition.startsWith(prefix)) this.order.delete(key);
    return n;
  }

  async sweep(): Promise<number> {
    const now = this.clock();
    let n = 0;
    for (const [name, p] of [...this.partitions])
      for (const id of p.expired(now)) if (this.remove(name, id)) n++;
    return n;
  }

  async stats(): Promise<VectorIndexStats> {
    let memoryBytes = 0;
    for (const p of this.partitions.values()) memoryBytes += p.memoryBytes;
    return {
      backend: 'memory',
      status: 'ok',
      entries: this.order.size,
      partitions: this.partitions.size,
      memoryBytes,
    };
  }

  async close(): Promise<void> {}
}
