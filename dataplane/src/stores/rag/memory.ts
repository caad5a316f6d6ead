/**
 * In-process RAG indexes, searched exactly: a full scan of one owner's index, which is
 * memory-bound (measured on the 2-core CI machine under load: ~120 ms per query over 20,000
 * chunks of 1,536 floats, 123 MB read; hence 5,000 per index, ~30 ms). Bounded per index, per
 * tenant (10,000: one tenant cannot take the room every other tenant's ingest needs) and in
 * total (25,000 chunks ≈ 150 MB at 1,536 floats); one pod only. Nothing is evicted: chunks
 * are a tenant's data, kept until it deletes them, so past a bound ingest is refused.
 * Larger knowledge bases belong in Milvus (vector-backed.ts).
 */
import { topK } from './similarity.ts';
import { newId } from '../ids.ts';
import { ownedKey, type Owner } from '../owned/types.ts';
import {
  RagIndexFull,
  RagStorageFull,
  type ChunkHit,
  type IndexInfo,
  type RagIndexStore,
  type RoomHold,
  type StoredChunk,
} from './types.ts';

export interface MemoryRagOptions {
  maxChunksPerIndex?: number | undefined;
  /** All of one tenant's indexes together (every key of the tenant). */
  maxChunksPerTenant?: number | undefined;
  maxChunksTotal?: number | undefined;
}

interface Hold {
  tenant: string;
  /** ownedKey of the index. */
  index: string;
  chunks: number;
}

interface Index {
  embeddingModel: string;
  dimensions: number;
  chunks: StoredChunk[];
}

export const DEFAULT_MAX_CHUNKS_PER_INDEX = 5_000;
export const DEFAULT_MAX_CHUNKS_PER_TENANT = 10_000;
export const DEFAULT_MAX_CHUNKS_TOTAL = 25_000;

export class MemoryRagIndexStore implements RagIndexStore {
  private readonly indexes = new Map<string, Index>();
  private total = 0;
  /** Tenant → chunks held in all its indexes. */
  private readonly perTenantHeld = new Map<string, number>();
  /** Room taken by ingests still embedding: counted against every bound until added or released. */
  private readonly holds = new Map<string, Hold>();
  private readonly perIndex: number;
  private readonly perTenant: number;
  private readonly maxTotal: number;

  constructor(opts: MemoryRagOptions = {}) {
    this.perIndex = opts.maxChunksPerIndex ?? DEFAULT_MAX_CHUNKS_PER_INDEX;
    this.maxTotal = opts.maxChunksTotal ?? DEFAULT_MAX_CHUNKS_TOTAL;
    this.perTenant = Math.min(opts.maxChunksPerTenant ?? DEFAULT_MAX_CHUNKS_PER_TENANT, this.maxTotal);
  }

  private pending(match: (h: Hold) => boolean): number {
    let n = 0;
    for (const h of this.holds.values()) if (match(h)) n += h.chunks;
    return n;
  }

  /** The narrowest bound first, so the message names what the caller can act on. */
  private refusal(owner: Owner, index: string, adding: number): Error | undefined {
    const key = ownedKey(owner, index);
    const inIndex = (this.indexes.get(key)?.chunks.length ?? 0) + this.pending((h) => h.index === key);
    if (inIndex + adding > this.perIndex) return new RagIndexFull(this.perIndex, inIndex);
    const inTenant =
      (this.perTenantHeld.get(owner.tenant) ?? 0) + this.pending((h) => h.tenant === owner.tenant);
    if (inTenant + adding > this.perTenant)
      return new RagStorageFull('tenant', this.perTenant, inTenant, adding);
    const total = this.total + this.pending(() => true);
    if (total + adding > this.maxTotal) return new RagStorageFull('store', this.maxTotal, total, adding);
    return undefined;
  }

  private count(tenant: string, delta: number): void {
    const held = (this.perTenantHeld.get(tenant) ?? 0) + delta;
    if (held > 0) this.perTenantHeld.set(tenant, held);
    else this.perTenantHeld.delete(tenant);
    this.total += delta;
  }

  async reserve(owner: Owner, index: string, chunks: number): Promise<RoomHold> {
    const refused = this.refusal(owner, index, chunks);
    if (refused) throw refused;
    const id = newId();
    this.holds.set(id, { tenant: owner.tenant, index: ownedKey(owner, index), chunks });
    return { id, chunks };
  }

  async release(hold: RoomHold): Promise<void> {
    this.holds.delete(hold.id);
  }

  private static infoOf(ix: Index): IndexInfo {
    return {
      embeddingModel: ix.embeddingModel,
      dimensions: ix.dimensions,
      chunks: ix.chunks.length,
      documents: new Set(ix.chunks.map((c) => c.documentId)).size,
    };
  }

  async info(owner: Owner, index: string): Promise<IndexInfo | undefined> {
    const ix = this.indexes.get(ownedKey(owner, index));
    return ix ? MemoryRagIndexStore.infoOf(ix) : undefined;
  }

  async add(
    owner: Owner,
    index: string,
    embeddingModel: string,
    chunks: StoredChunk[],
    hold?: RoomHold,
  ): Promise<IndexInfo> {
    const key = ownedKey(owner, index);
    const ix = this.indexes.get(key) ?? {
      embeddingModel,
      dimensions: chunks[0]?.vector.length ?? 0,
      chunks: [],
    };
    // The hold's own room is not counted against it.
    if (hold) this.holds.delete(hold.id);
    const refused = this.refusal(owner, index, chunks.length);
    if (refused) throw refused;
    ix.chunks.push(...chunks);
    this.count(owner.tenant, chunks.length);
    this.indexes.set(key, ix);
    return MemoryRagIndexStore.infoOf(ix);
  }

  async search(owner: Owner, index: string, probe: Float32Array, k: number): Promise<ChunkHit[]> {
    const ix = this.indexes.get(ownedKey(owner, index));
    if (!ix) return [];
    return topK(probe, ix.chunks, (c) => c.vector, k).map(({ item: { vector: _v, ...chunk }, score }) => ({
      chunk,
      score,
    }));
  }

  async deleteDocument(owner: Owner, index: string, documentId: string): Promise<boolean> {
    const key = ownedKey(owner, index);
    const ix = this.indexes.get(key);
    if (!ix) return false;
    const kept = ix.chunks.filter((c) => c.documentId !== documentId);
    const removed = ix.chunks.length - kept.length;
    this.count(owner.tenant, -removed);
    if (kept.length === 0) this.indexes.delete(key);
    else ix.chunks = kept;
    return removed > 0;
  }

  async deleteIndex(owner: Owner, index: string): Promise<boolean> {
    const key = ownedKey(owner, index);
    const ix = this.indexes.get(key);
    if (!ix) return false;
    this.count(owner.tenant, -ix.chunks.length);
    this.indexes.delete(key);
    return true;
  }
}
