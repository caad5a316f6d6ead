/**
 * In-process RAG indexes, searched exactly: a full scan of one owner's index, which is
 * memory-bound (measured on the 2-core CI machine under load: ~120 ms per query over 20,000
 * chunks of 1,536 floats, 123 MB read; hence 5,000 per index, ~30 ms). Bounded per index and
 * in total (25,000 chunks ≈ 150 MB at 1,536 floats); one pod only. Larger knowledge bases
 * belong in Milvus (vector-backed.ts).
 */
import { topK } from './similarity.ts';
import { ownedKey, type Owner } from '../owned/types.ts';
import {
  RagIndexFull,
  type ChunkHit,
  type IndexInfo,
  type RagIndexStore,
  type StoredChunk,
} from './types.ts';

export interface MemoryRagOptions {
  maxChunksPerIndex?: number;
  maxChunksTotal?: number;
}

interface Index {
  embeddingModel: string;
  dimensions: number;
  chunks: StoredChunk[];
}

export const DEFAULT_MAX_CHUNKS_PER_INDEX = 5_000;
export const DEFAULT_MAX_CHUNKS_TOTAL = 25_000;

export class MemoryRagIndexStore implements RagIndexStore {
  private readonly indexes = new Map<string, Index>();
  private total = 0;
  private readonly perIndex: number;
  private readonly maxTotal: number;

  constructor(opts: MemoryRagOptions = {}) {
    this.perIndex = opts.maxChunksPerIndex ?? DEFAULT_MAX_CHUNKS_PER_INDEX;
    this.maxTotal = opts.maxChunksTotal ?? DEFAULT_MAX_CHUNKS_TOTAL;
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

  async add(owner: Owner, index: string, embeddingModel: string, chunks: StoredChunk[]): Promise<IndexInfo> {
    const key = ownedKey(owner, index);
    const ix = this.indexes.get(key) ?? {
      embeddingModel,
      dimensions: chunks[0]?.vector.length ?? 0,
      chunks: [],
    };
    if (ix.chunks.length + chunks.length > this.perIndex)
      throw new RagIndexFull(this.perIndex, ix.chunks.length);
    if (this.total + chunks.length > this.maxTotal) throw new RagIndexFull(this.maxTotal, this.total);
    ix.chunks.push(...chunks);
    this.total += chunks.length;
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
    this.total -= removed;
    if (kept.length === 0) this.indexes.delete(key);
    else ix.chunks = kept;
    return removed > 0;
  }
}
