/**
 * RAG indexes: shared by every pod (vectors in Milvus, texts in Redis) when both are
 * configured, else in process. One without the other would split an index between a
 * shared half and a per-pod half, so it stays in process.
 */
import type { Stores } from '../index.ts';
import type { MilvusConsistency } from '../vectors/index.ts';
import type { RagChunkBounds } from './limits-env.ts';
import { MemoryRagIndexStore } from './memory.ts';
import type { RagIndexStore } from './types.ts';
import { RAG_KEEP_MS, VectorRagIndexStore, type RagRecord, type SharedRagLimits } from './vector-backed.ts';

/**
 * Shared defaults. Milvus searches by its own index, so one knowledge base may be far larger
 * than in process. A tenant may hold 200,000 chunks (≈1.2 GB of 1,536-float vectors in
 * Milvus, ≈200 MB of text in Redis at the default chunk size) and all tenants 1,000,000
 * together, so one tenant making index after index cannot fill Milvus or Redis for the rest.
 */
export const SHARED_RAG_LIMITS: SharedRagLimits = { perIndex: 100_000, perTenant: 200_000, total: 1_000_000 };

export interface RagStoreOptions {
  stores: Stores;
  milvusAddress?: string | undefined;
  milvusConsistency?: MilvusConsistency | undefined;
  /** Overrides of the chunk bounds of whichever store serves. */
  bounds?: RagChunkBounds | undefined;
}

export interface RagBackend {
  store: RagIndexStore;
  kind: 'memory' | 'milvus+redis';
  close(): Promise<void>;
}

export async function createRagIndexStore(opts: RagStoreOptions): Promise<RagBackend> {
  const bounds = opts.bounds ?? {};
  if (!opts.milvusAddress || opts.stores.kind !== 'redis')
    return {
      store: new MemoryRagIndexStore({
        maxChunksPerIndex: bounds.perIndex,
        maxChunksPerTenant: bounds.perTenant,
        maxChunksTotal: bounds.total,
      }),
      kind: 'memory',
      close: async () => {},
    };
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
      opts.stores.ragQuota,
      {
        perIndex: bounds.perIndex ?? SHARED_RAG_LIMITS.perIndex,
        perTenant: bounds.perTenant ?? SHARED_RAG_LIMITS.perTenant,
        total: bounds.total ?? SHARED_RAG_LIMITS.total,
      },
    ),
    kind: 'milvus+redis',
    close: () => vectors.close(),
  };
}

export type * from './types.ts';
export { ragBoundsFromEnv } from './limits-env.ts';
