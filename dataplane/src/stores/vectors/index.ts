/** Cache vectors: in process (embedded default) or in Milvus (shared by pods). */
import type { Clock } from '../types.ts';
import { MemoryVectorIndex, type MemoryVectorIndexOptions } from './memory/index.ts';
import { MilvusVectorIndex, type MilvusVectorIndexOptions } from './milvus/index.ts';
import type { VectorIndex } from './types.ts';

export interface VectorIndexOptions {
  /** Milvus `host:port`; in process when absent. */
  milvusAddress?: string | undefined;
  milvus?: Omit<MilvusVectorIndexOptions, 'address' | 'clock'>;
  memory?: Omit<MemoryVectorIndexOptions, 'clock'>;
  clock?: Clock;
}

export function createVectorIndex(opts: VectorIndexOptions = {}): VectorIndex {
  return opts.milvusAddress
    ? new MilvusVectorIndex({ ...opts.milvus, address: opts.milvusAddress, clock: opts.clock })
    : new MemoryVectorIndex({ ...opts.memory, clock: opts.clock });
}

export { MemoryVectorIndex } from './memory/index.ts';
export { MilvusVectorIndex, type MilvusConsistency } from './milvus/index.ts';
export { MilvusRequestError } from './milvus/errors.ts';
export type * from './types.ts';
