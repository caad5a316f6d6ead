/** The context-recovery store: Redis when the gateway has one (a cluster), else in process. */
import type { Redis } from 'ioredis';
import type { RedisClientOptions } from '../../../stores/redis/client.ts';
import type { Clock } from '../../../stores/types.ts';
import { MemoryCcrStore } from './memory.ts';
import { RedisCcrStore } from './redis.ts';
import type { CcrStore } from './types.ts';

export function createCcrStore(opts: {
  redis?: Redis | RedisClientOptions | undefined;
  prefix?: string | undefined;
  clock?: Clock;
}): CcrStore {
  return opts.redis
    ? new RedisCcrStore(opts.redis, { prefix: opts.prefix, clock: opts.clock })
    : new MemoryCcrStore({ clock: opts.clock });
}

export { MemoryCcrStore } from './memory.ts';
export { RedisCcrStore } from './redis.ts';
export type * from './types.ts';
