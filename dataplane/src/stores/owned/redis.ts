/**
 * Owned objects in Redis, shared by every pod: one JSON string per object, expiring after
 * `ttlMs` (Redis' maxmemory policy bounds the total). The key holds the tenant (hash tag),
 * the namespace, the key id and the object id, so another owner's lookup reads a different
 * key and finds nothing.
 */
import type { Redis } from 'ioredis';
import { toStoreError } from '../redis/client.ts';
import type { KeySpace } from '../redis/keys.ts';
import { bindScript, type BoundScript } from '../redis/script.ts';
import { GET_WITHIN_LUA, luaMaxBytes, SIZE_HEAD_CHARS, type OversizedRecord } from '../size-head.ts';
import type { Owner, OwnedStore } from './types.ts';

const enc = encodeURIComponent;

export class RedisOwnedStore<T> implements OwnedStore<T> {
  private readonly getWithinScript: BoundScript;

  constructor(
    private readonly redis: Redis,
    private readonly keys: KeySpace,
    private readonly namespace: string,
    private readonly ttlMs: number,
  ) {
    this.getWithinScript = bindScript(
      redis,
      { name: 'gantrySizedGetWithin', numberOfKeys: 1, lua: GET_WITHIN_LUA },
      `${namespace}.get`,
    );
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
    const reply = (await this.getWithinScript(
      [this.key(owner, id)],
      [SIZE_HEAD_CHARS, luaMaxBytes(maxConversationBytes)],
    )) as string | number | null;
    if (reply === null) return undefined;
    if (typeof reply === 'number') return { oversized: true, conversationBytes: reply };
    return JSON.parse(reply) as T;
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
