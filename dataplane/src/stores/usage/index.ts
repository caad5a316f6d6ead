/**
 * Usage stores: where every request's UsageRecord goes (rollups, request log, security
 * counters). In process by default; on Redis when the data plane has a Redis URL.
 */
import type { Redis } from 'ioredis';
import type { UsageStore } from '../../accounting/usage.ts';
import type { KeySpace } from '../redis/keys.ts';
import type { Clock } from '../types.ts';
import { MemoryUsageState, MemoryUsageStore } from './memory.ts';
import type { UsageStoreOptions } from './options.ts';
import { RedisUsageStore } from './redis.ts';

export function createMemoryUsageStore(
  opts: UsageStoreOptions & { state?: MemoryUsageState; clock?: Clock } = {},
): UsageStore {
  return new MemoryUsageStore(opts.state ?? new MemoryUsageState(), opts, opts.clock);
}

/** On a client the caller owns (the one the other stores use), under the same key namespace. */
export function createRedisUsageStore(
  client: Redis,
  keys: KeySpace,
  opts: UsageStoreOptions & { clock?: Clock } = {},
): UsageStore {
  return new RedisUsageStore(client, keys, opts, opts.clock);
}

export { MemoryUsageState, MemoryUsageStore } from './memory.ts';
export { RedisUsageStore } from './redis.ts';
export { RetryingUsageRecorder, type UsageRecorder, type RetryingRecorderOptions } from './retrying.ts';
export type { UsageStoreOptions } from './options.ts';
export { DEFAULT_DEDUPE_MS, DEFAULT_LOG_LIMIT, DEFAULT_RETENTION_DAYS } from './options.ts';
export { accumulate, emptyCounters, toRollupRow, type RollupCounters } from './accumulate.ts';
