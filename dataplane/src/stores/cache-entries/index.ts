/** Cache entry payloads: in process (embedded default) or in Redis (shared by pods). */
import type { Redis } from 'ioredis';
import type { RedisClientOptions } from '../redis/client.ts';
import type { Clock } from '../types.ts';
import { MemoryCacheEntryStore, type MemoryCacheEntryStoreOptions } from './memory.ts';
import { RedisCacheEntryStore } from './redis.ts';
import type { CacheEntryStore } from './types.ts';

export interface CacheEntryStoreOptions extends MemoryCacheEntryStoreOptions {
  /** Redis to use: an existing client (shared with the other stores) or a URL. In process when absent. */
  redis?: Redis | RedisClientOptions | undefined;
  prefix?: string;
  clock?: Clock;
}

export function createCacheEntryStore(opts: CacheEntryStoreOptions = {}): CacheEntryStore {
  return opts.redis
    ? new RedisCacheEntryStore(opts.redis, { prefix: opts.prefix, clock: opts.clock })
    : new MemoryCacheEntryStore(opts);
}

export { MemoryCacheEntryStore } from './memory.ts';
export { RedisCacheEntryStore } from './redis.ts';
export type * from './types.ts';
export { partitionKey, partitionTenant, isPartition, assertPartition } from './partition.ts';
