/** Cache vectors: in process (embedded default) or in Milvus (shared by pods). */
import type { Clock } from '../types.ts';
import { MemoryVectorIndex, type MemoryVectorIndexOptions } from './memory/index.ts';
import type { MilvusVectorIndexOptions } from './milvus/index.ts';
import type { VectorIndex } from './types.ts';

export interface VectorIndexOptions {
  /** Milvus `host:port`; in process when absent. */
  milvusAddress?: string | undefined;
  milvus?: Omit<MilvusVectorIndexOptions, 'address' | 'clock'>;
  memory?: Omit<MemoryVectorIndexOptions, 'clock'>;
  clock?: Clock;
}

/** The Milvus SDK (gRPC, protobufs: ~30 MB) is loaded only when a Milvus address is set. */
export async function createVectorIndex(opts: VectorIndexOptions = {}): Promise<VectorIndex> {
  if (!opts.milvusAddress) return new MemoryVectorIndex({ ...opts.memory, clock: opts.clock });
  const { MilvusVectorIndex } = await import('./milvus/index.ts');
  return new MilvusVectorIndex({ ...opts.milvus, address: opts.milvusAddress, clock: opts.clock });
}

export { MemoryVectorIndex } from './memory/index.ts';
export type { MilvusConsistency } from './milvus/index.ts';
export type * from './types.ts';
