/**
 * Stored responses in Redis, shared by every pod: one JSON string per response, expiring
 * after `ttlMs` (Redis' maxmemory policy bounds the total). The key holds the tenant (hash
 * tag, like every tenant key), the key hash and the id, so another owner's lookup reads a
 * different key and finds nothing.
 */
import type { Redis } from 'ioredis';
import { toStoreError } from '../redis/client.ts';
import type { KeySpace } from '../redis/keys.ts';
import { DEFAULT_RESPONSE_TTL_MS } from './memory.ts';
import type { ResponseOwner, ResponseStore, StoredResponse } from './types.ts';

export class RedisResponseStore implements ResponseStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: KeySpace,
    private readonly ttlMs = DEFAULT_RESPONSE_TTL_MS,
  ) {}

  private key(owner: ResponseOwner, id: string): string {
    return `${this.keys.tenant(owner.tenant)}:resp:${owner.keyHash}:${encodeURIComponent(id)}`;
  }

  async put(owner: ResponseOwner, entry: StoredResponse): Promise<void> {
    await this.redis
      .set(this.key(owner, entry.response.id), JSON.stringify(entry), 'PX', this.ttlMs)
      .catch((err: unknown) => {
        throw toStoreError('responses.put', err);
      });
  }

  async get(owner: ResponseOwner, id: string): Promise<StoredResponse | undefined> {
    const text = await this.redis.get(this.key(owner, id)).catch((err: unknown) => {
      throw toStoreError('responses.get', err);
    });
    return text === null ? undefined : (JSON.parse(text) as StoredResponse);
  }

  async delete(owner: ResponseOwner, id: string): Promise<boolean> {
    const removed = await this.redis.del(this.key(owner, id)).catch((err: unknown) => {
      throw toStoreError('responses.delete', err);
    });
    return removed > 0;
  }
}
