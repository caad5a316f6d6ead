/**
 * RAG indexes: shared by every pod (vectors in Milvus, texts in Redis) when both are
 * configured, else in process. One without the other would split an index between a
 * shared half and a per-pod half, so it stays in process.
 */
import type { Stores } from '../index.ts';
import type { MilvusConsistency } from '../vectors/index.ts';
import { MemoryRagIndexStore } from './memory.ts';
import type { RagIndexStore } from './types.ts';
import { RAG_KEEP_MS, VectorRagIndexStore, type RagRecord } from './vector-backed.ts';

/** Milvus searches by its own index, so a shared knowledge base may be far larger. */
export const SHARED_MAX_CHUNKS_PER_INDEX = 100_000;

export interface RagStoreOptions {
  stores: Stores;
  milvusAddress?: string | undefined;
  milvusConsistency?: MilvusConsistency | undefined;
}

export interface RagBackend {
  store: RagIndexStore;
  kind: 'memory' | 'milvus+redis';
  close(): Promise<void>;
}

export async function createRagIndexStore(opts: RagStoreOptions): Promise<RagBackend> {
  if (!opts.milvusAddress || opts.stores.kind !== 'redis')
    return { store: new MemoryRagIndexStore(), kind: 'memory', close: async () => {} };
  // The Milvus SDK is loaded only when Milvus is configured (as for the cache).
  const { MilvusVectorIndex } = await import('../vectors/milvus/index.ts');
  // A collection prefix of its own: the semantic cache's flushes never reach knowledge bases.
  const vectors = new MilvusVectorIndex({
    address: opts.milvusAddress,
    prefix: 'gantry_rag',
    consistency: opts.milvusConsistency ?? 'Strong',
  });
  return {
    store: new VectorRagIndexStore(
      vectors,
      opts.stores.owned<RagRecord>('rag', { ttlMs: RAG_KEEP_MS }),
      SHARED_MAX_CHUNKS_PER_INDEX,
    ),
    kind: 'milvus+redis',
    close: () => vectors.close(),
  };
}

export type * from './types.ts';
