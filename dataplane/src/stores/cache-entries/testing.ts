/** Test support: the two cache entry stores behind one fixture shape (see vectors/testing.ts). */
import { Redis } from 'ioredis';
import { testRedisUrl } from '../../../../test/harness/redis.ts';
import { newId } from '../ids.ts';
import { waitForReady } from '../redis/client.ts';
import type { Clock } from '../types.ts';
import { MemoryCacheEntryStore } from './memory.ts';
import { RedisCacheEntryStore } from './redis.ts';
import type { CacheEntryStore } from './types.ts';

export interface EntryFixture {
  store: CacheEntryStore;
  /** Redis only: a plain client on the same server, to look behind the store. */
  raw?: Redis;
  prefix: string;
  close(): Promise<void>;
}

export interface EntryBackend {
  name: 'memory' | 'redis';
  create(clock: Clock): Promise<EntryFixture>;
}

export const memoryEntries: EntryBackend = {
  name: 'memory',
  create: async (clock) => {
    const store = new MemoryCacheEntryStore({ clock });
    return { store, prefix: '', close: () => store.close() };
  },
};

export const redisEntries: EntryBackend = {
  name: 'redis',
  async create(clock) {
    const prefix = `test-${newId()}`;
    const raw = new Redis(testRedisUrl());
    await waitForReady(raw);
    const store = new RedisCacheEntryStore(raw, { prefix, clock });
    return {
      store,
      raw,
      prefix,
      close: async () => {
        await store.close();
        raw.disconnect();
      },
    };
  },
};

export const entryBackends: readonly EntryBackend[] = [memoryEntries, redisEntries];
