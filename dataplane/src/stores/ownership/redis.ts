/**
 * Ownership records in Redis, shared by every pod. Under the tenant's hash tag: one JSON
 * string per object (expiring with it, or after a year), and per key and family a sorted set
 * of ids by creation time for listing, trimmed to the newest `MAX_LISTED_PER_OWNER`.
 */
import type { Redis } from 'ioredis';
import { toStoreError } from '../redis/client.ts';
import type { KeySpace } from '../redis/keys.ts';
import { systemClock, type Clock } from '../types.ts';
import {
  keptUntil,
  MAX_LISTED_PER_OWNER,
  OWNED_MAX_AGE_MS,
  type Family,
  type Owner,
  type OwnedRecord,
  type OwnershipStore,
} from './types.ts';

const enc = encodeURIComponent;

export class RedisOwnershipStore implements OwnershipStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: KeySpace,
    private readonly clock: Clock = systemClock,
  ) {}

  private recordKey(tenant: string, family: Family, id: string): string {
    return `${this.keys.tenant(tenant)}:held:${family}:${enc(id)}`;
  }

  private indexKey(owner: Owner, family: Family): string {
    return `${this.keys.tenant(owner.tenant)}:held:${family}:idx:${enc(owner.keyId)}`;
  }

  private fail(operation: string): (err: unknown) => never {
    return (err) => {
      throw toStoreError(`owned.${operation}`, err);
    };
  }

  async put(record: OwnedRecord): Promise<void> {
    const now = this.clock();
    const ttl = Math.max(1, keptUntil(record, now) - now);
    const index = this.indexKey(record, record.family);
    const results = await this.redis
      .multi()
      .set(this.recordKey(record.tenant, record.family, record.id), JSON.stringify(record), 'PX', ttl)
      .zadd(index, record.createdAt, record.id)
      .zremrangebyrank(index, 0, -(MAX_LISTED_PER_OWNER + 1))
      .pexpire(index, OWNED_MAX_AGE_MS)
      .exec()
      .catch(this.fail('put'));
    const failed = results?.find(([err]) => err);
    if (failed) this.fail('put')(failed[0]);
  }

  async get(tenant: string, family: Family, id: string): Promise<OwnedRecord | undefined> {
    const text = await this.redis.get(this.recordKey(tenant, family, id)).catch(this.fail('get'));
    return text === null ? undefined : (JSON.parse(text) as OwnedRecord);
  }

  async delete(record: Pick<OwnedRecord, 'tenant' | 'keyId' | 'family' | 'id'>): Promise<void> {
    await this.redis
      .multi()
      .del(this.recordKey(record.tenant, record.family, record.id))
      .zrem(this.indexKey(record, record.family), record.id)
      .exec()
      .catch(this.fail('delete'));
  }

  async list(owner: Owner, family: Family): Promise<OwnedRecord[]> {
    const index = this.indexKey(owner, family);
    const ids = await this.redis.zrevrange(index, 0, MAX_LISTED_PER_OWNER - 1).catch(this.fail('list'));
    if (ids.length === 0) return [];
    const texts = await this.redis
      .mget(ids.map((id) => this.recordKey(owner.tenant, family, id)))
      .catch(this.fail('list'));
    const out: OwnedRecord[] = [];
    const gone: string[] = [];
    texts.forEach((text, i) => {
      if (text === null) gone.push(ids[i]!);
      else {
        const r = JSON.parse(text) as OwnedRecord;
        if (r.keyId === owner.keyId) out.push(r);
      }
    });
    // Records expire on their own; their index entries are dropped when a list meets them.
    if (gone.length > 0) await this.redis.zrem(index, ...gone).catch(this.fail('list'));
    return out;
  }

  async claim(tenant: string, family: Family, id: string, mark: string): Promise<boolean> {
    const key = `${this.recordKey(tenant, family, id)}:claim:${enc(mark)}`;
    const set = await this.redis.set(key, '1', 'PX', OWNED_MAX_AGE_MS, 'NX').catch(this.fail('claim'));
    return set === 'OK';
  }
}
