/**
 * Test support: the two store backends behind one fixture shape, so each behavioural suite is
 * written once and run against both. A fixture is one isolated namespace; `open()` gives
 * another handle on it — for Redis a separate ioredis client, as another pod would have.
 */
import { testRedisUrl } from '../../../../test/harness/redis.ts';
import { newId } from '../ids.ts';
import { createMemoryStores, createRedisStores, type Stores, type StoresOptions } from '../index.ts';
import { MemoryState } from '../memory/state.ts';
import type { Clock } from '../types.ts';

export interface FakeClock {
  readonly now: Clock;
  advance(ms: number): void;
  set(ms: number): void;
}

export function fakeClock(start = Date.parse('2025-03-14T12:00:00Z')): FakeClock {
  let t = start;
  return {
    now: () => t,
    advance: (ms) => {
      t += ms;
    },
    set: (ms) => {
      t = ms;
    },
  };
}

export interface StoreFixture {
  open(): Promise<Stores>;
  close(): Promise<void>;
}

export interface Backend {
  name: 'memory' | 'redis';
  create(opts?: StoresOptions): Promise<StoreFixture>;
}

export const memoryBackend: Backend = {
  name: 'memory',
  async create(opts = {}) {
    const state = new MemoryState({ ledgerMaxEntries: opts.ledgerMaxEntries });
    return { open: async () => createMemoryStores({ ...opts, state }), close: async () => {} };
  },
};

export const redisBackend: Backend = {
  name: 'redis',
  async create(opts = {}) {
    const url = testRedisUrl();
    const prefix = `test-${newId()}`;
    const opened: Stores[] = [];
    return {
      async open() {
        const stores = createRedisStores({ url }, { ...opts, prefix });
        opened.push(stores);
        await stores.ready();
        return stores;
      },
      async close() {
        await Promise.all(opened.map((s) => s.close()));
      },
    };
  },
};

export const backends: readonly Backend[] = [memoryBackend, redisBackend];
