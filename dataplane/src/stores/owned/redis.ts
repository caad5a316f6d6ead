/**
 * Owned objects in Redis, shared by every pod: one JSON string per object, expiring after
 * `ttlMs` (Redis' maxmemory policy bounds the total). The key holds the tenant (hash tag),
 * the namespace, the key id and the object id, so another owner's lookup reads a different
 * key and finds nothing.
 */
import type { Redis } from 'ioredis';
import { toStoreError } from '../redis/client.ts';
import type { KeySpace } from '../redis/keys.ts';
import { bindGetWithin, type GetWithin } from '../redis/get-within.ts';
import type { OversizedRecord } from '../size-head.ts';
import type { Owner, OwnedStore } from './types.ts';

const enc = encodeURIComponent;

export class RedisOwnedStore<T> implements OwnedStore<T> {
  private readonly readWithin: GetWithin;

  constructor(
    private readonly redis: Redis,
    private readonly keys: KeySpace,
    private readonly namespace: string,
    private readonly ttlMs: number,
  ) {
    this.readWithin = bindGetWithin(redis, `${namespace}.get`);
  }

  private key(owner: Owner, id: string): string {
    return `${this.keys.tenant(owner.tenant)}:owned:${enc(this.namespace)}:${enc(owner.keyId)}:${enc(id)}`;
  }

  async put(owner: Owner, id: string, value: T): Promise<void> {
    await this.redis
      .set(this.key(owner, id), JSON.stringify(value), 'PX', this.ttlMs)
      .catch((err: unknown) => {
        throw toStoreError(`${this.namespace}.put`, err);
      });
  }

  async putJson(owner: Owner, id: string, json: string): Promise<void> {
    await this.redis.set(this.key(owner, id), json, 'PX', this.ttlMs).catch((err: unknown) => {
      throw toStoreError(`${this.namespace}.put`, err);
    });
  }

  async getWithin(
    owner: Owner,
    id: string,
    maxConversationBytes: number,
  ): Promise<T | OversizedRecord | undefined> {
    const reply = await this.readWithin(this.key(owner, id), maxConversationBytes);
    return typeof reply === 'string' ? (JSON.parse(reply) as T) : reply;
  }

  async putIfAbsent(owner: Owner, id: string, value: T): Promise<boolean> {
    const set = await this.redis
      .set(this.key(owner, id), JSON.stringify(value), 'PX', this.ttlMs, 'NX')
      .catch((err: unknown) => {
        throw toStoreError(`${this.namespace}.put`, err);
      });
    return set === 'OK';
  }

  async get(owner: Owner, id: string): Promise<T | undefined> {
    const text = await this.redis.get(this.key(owner, id)).catch((err: unknown) => {
      throw toStoreError(`${this.namespace}.get`, err);
    });
    return text === null ? undefined : (JSON.parse(text) as T);
  }

  async delete(owner: Owner, id: string): Promise<boolean> {
    const removed = await this.redis.del(this.key(owner, id)).catch((err: unknown) => {
      throw toStoreError(`${this.namespace}.delete`, err);
    });
    return removed > 0;
  }
}
