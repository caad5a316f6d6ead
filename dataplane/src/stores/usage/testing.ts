/**
 * Test support: both usage-store backends behind one fixture shape, like `../testing/backends.ts`.
 * A fixture is one isolated namespace; `open()` gives another handle on it — for Redis a separate
 * ioredis client, as another pod would have.
 */
import { testRedisUrl } from '../../../../test/harness/redis.ts';
import type { UsageStore } from '../../accounting/usage.ts';
import { newId } from '../ids.ts';
import { createRedisClient } from '../redis/client.ts';
import { waitForReady } from '../redis/client.ts';
import { KeySpace } from '../redis/keys.ts';
import type { Clock } from '../types.ts';
import { createMemoryUsageStore, createRedisUsageStore } from './index.ts';
import { MemoryUsageState } from './memory.ts';
import type { UsageStoreOptions } from './options.ts';

export type UsageBackendOptions = UsageStoreOptions & { clock?: Clock };

export interface UsageFixture {
  open(): Promise<UsageStore>;
  close(): Promise<void>;
}

export interface UsageBackend {
  name: 'memory' | 'redis';
  create(opts?: UsageBackendOptions): Promise<UsageFixture>;
}

export const memoryUsageBackend: UsageBackend = {
  name: 'memory',
  async create(opts = {}) {
    const state = new MemoryUsageState();
    return { open: async () => createMemoryUsageStore({ ...opts, state }), close: async () => {} };
  },
};

export const redisUsageBackend: UsageBackend = {
  name: 'redis',
  async create(opts = {}) {
    const url = testRedisUrl();
    const keys = new KeySpace(`test-${newId()}`);
    const clients: ReturnType<typeof createRedisClient>[] = [];
    return {
      async open() {
        const client = createRedisClient({ url });
        clients.push(client);
        await waitForReady(client);
        return createRedisUsageStore(client, keys, opts);
      },
      async close() {
        for (const c of clients) c.disconnect();
      },
    };
  },
};

export const usageBackends: readonly UsageBackend[] = [memoryUsageBackend, redisUsageBackend];
