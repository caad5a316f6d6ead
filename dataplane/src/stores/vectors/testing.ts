/**
 * Test support: the two vector index backends behind one fixture shape, so the behavioural
 * suite is written once and run against both. Each fixture is isolated (Milvus: its own
 * collection prefix on the shared Milvus Lite server) and reads time from the given clock.
 */
import { testMilvusAddress } from '../../../../test/harness/milvus.ts';
import { newId } from '../ids.ts';
import type { Clock } from '../types.ts';
import { MemoryVectorIndex } from './memory/index.ts';
import { MilvusVectorIndex } from './milvus/index.ts';
import type { VectorIndex } from './types.ts';

export interface VectorBackend {
  name: 'memory' | 'milvus';
  create(clock: Clock): Promise<VectorIndex>;
}

export const memoryVectors: VectorBackend = {
  name: 'memory',
  create: async (clock) => new MemoryVectorIndex({ clock }),
};

export const milvusVectors: VectorBackend = {
  name: 'milvus',
  async create(clock) {
    const index = new MilvusVectorIndex({
      address: testMilvusAddress(),
      prefix: `t_${newId().replace(/[^A-Za-z0-9]/g, '')}`,
      consistency: 'Strong',
      timeoutMs: 10_000,
      clock,
    });
    await index.ready();
    return index;
  },
};

export const vectorBackends: readonly VectorBackend[] = [memoryVectors, milvusVectors];
