/**
 * Ownership records in Redis, shared by every pod. Under the tenant's hash tag: one JSON
 * string per object (expiring with it, or after a year), and per key and family a sorted set
 * of ids by creation time for listing, trimmed to the newest `MAX_LISTED_PER_OWNER`.
 */
import type { Redis } from 'ioredis';
import { toStoreError } from '../redis/client.ts';
import { bindScript, type BoundScript } from '../redis/script.ts';
import type { KeySpace } from '../redis/keys.ts';
import { systemClock, type Clock } from '../types.ts';
import {
  keptUntil,
  MAX_LISTED_PER_OWNER,
  isSwept,
  MAX_UNSETTLED_BATCHES,
  OWNED_MAX_AGE_MS,
  SWEEP_LEASE_MS,
  type Claimable,
  type ClaimScope,
  type Family,
  type Owner,
  type OwnedRecord,
  type OwnershipStore,
  type SweptFamily,
} from './types.ts';

const enc = encodeURIComponent;

/**
 * Takes up to ARGV[2] queue members free at ARGV[1] (score: when last looked at, or until when
 * leased), least recently looked at first, and leases them until ARGV[3], in one step: two pods
 * ticking at once take different records.
 */
const LEASE_LUA = `
local taken = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
for _, m in ipairs(taken) do redis.call('ZADD', KEYS[1], 'XX', ARGV[3], m) end
return taken
`;

/**
 * Compare-and-set on one record: when it still reads ARGV[1], writes ARGV[2] keeping its expiry,
 * or deletes it (and its index entry ARGV[3]) when ARGV[2] is empty. 1 when written, 0 when the
 * record changed meanwhile (or went).
 */
const AMEND_LUA = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] == '' then
  redis.call('DEL', KEYS[1])
  redis.call('ZREM', KEYS[2], ARGV[3])
else
  redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
end
return 1
`;

/** Compare-and-set rounds an amendment tries before it reports the record too busy to change. */
const AMEND_ATTEMPTS = 16;

export class RedisOwnershipStore implements OwnershipStore {
  private readonly lease: BoundScript;
  private readonly cas: BoundScript;

  constructor(
    private readonly redis: Redis,
    private readonly keys: KeySpace,
    private readonly clock: Clock = systemClock,
  ) {
    this.lease = bindScript(
      redis,
      { name: 'gantryOwnedLease', numberOfKeys: 1, lua: LEASE_LUA },
      'owned.unsettled',
    );
    this.cas = bindScript(
      redis,
      { name: 'gantryOwnedAmend', numberOfKeys: 2, lua: AMEND_LUA },
      'owned.amend',
    );
  }

  private recordKey(tenant: string, family: ClaimScope, id: string): string {
    return `${this.keys.tenant(tenant)}:held:${family}:${enc(id)}`;
  }

  private indexKey(owner: Owner, family: Family): string {
    return `${this.keys.tenant(owner.tenant)}:held:${family}:idx:${enc(owner.keyId)}`;
  }

  /**
   * Per swept family, a ZSET of `tenant:id` (each part encoded) → when the sweep last looked
   * (creation at first). Across tenants, so outside any tenant's hash tag: written apart from
   * the tenant's keys.
   */
  private queueKey(family: SweptFamily): string {
    return `${this.keys.prefix}:held:${family}:unsettled`;
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
    if (isSwept(record.family))
      await this.redis
        .multi()
        .zadd(this.queueKey(record.family), 'NX', record.createdAt, `${enc(record.tenant)}:${enc(record.id)}`)
        .zremrangebyrank(this.queueKey(record.family), 0, -(MAX_UNSETTLED_BATCHES + 1))
        .exec()
        .catch(this.fail('put'));
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

  async amend(
    tenant: string,
    family: Family,
    id: string,
    change: (record: OwnedRecord) => OwnedRecord | null,
  ): Promise<OwnedRecord | null | undefined> {
    const key = this.recordKey(tenant, family, id);
    // The change is the caller's TypeScript, so it runs here, not in Lua: read, change, then
    // write only if nobody wrote in between, else again from what they wrote.
    for (let attempt = 0; attempt < AMEND_ATTEMPTS; attempt++) {
      const text = await this.redis.get(key).catch(this.fail('amend'));
      if (text === null) return undefined;
      const current = JSON.parse(text) as OwnedRecord;
      const next = change(current);
      const written = next === null ? '' : JSON.stringify({ ...next, tenant, family, id });
      if (written === text) return current;
      const index = this.indexKey({ tenant, keyId: current.keyId }, family);
      if ((await this.cas([key, index], [text, written, id])) === 1)
        return next === null ? null : (JSON.parse(written) as OwnedRecord);
    }
    throw toStoreError(
      'owned.amend',
      new Error(`record ${id} kept changing under ${AMEND_ATTEMPTS} attempts`),
    );
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

  async unsettled(limit: number, family: SweptFamily = 'batch'): Promise<OwnedRecord[]> {
    const now = Math.floor(this.clock());
    const members = (await this.lease(
      [this.queueKey(family)],
      [now, limit, now + SWEEP_LEASE_MS],
    )) as string[];
    const out: OwnedRecord[] = [];
    const gone: string[] = [];
    // One GET each: the records sit in their tenants' slots.
    const found = await Promise.all(
      members.map((m) => {
        const [tenant = '', id = ''] = m.split(':').map(decodeURIComponent);
        return this.get(tenant, family, id);
      }),
    );
    found.forEach((r, i) => (r ? out.push(r) : gone.push(members[i]!)));
    if (gone.length > 0) await this.redis.zrem(this.queueKey(family), ...gone).catch(this.fail('unsettled'));
    return out;
  }

  async swept(record: Pick<OwnedRecord, 'tenant' | 'id' | 'family'>, finished: boolean): Promise<void> {
    if (!isSwept(record.family)) return;
    const queue = this.queueKey(record.family);
    const member = `${enc(record.tenant)}:${enc(record.id)}`;
    await (
      finished
        ? this.redis.zrem(queue, member)
        : // XX: work another pod has just finished is not queued again. Now: the lease ends.
          this.redis.zadd(queue, 'XX', Math.floor(this.clock()), member)
    ).catch(this.fail('swept'));
  }

  private claimKey(tenant: string, family: ClaimScope, id: string, mark: string): string {
    return `${this.recordKey(tenant, family, id)}:claim:${enc(mark)}`;
  }

  async claimed(
    tenant: string,
    family: ClaimScope,
    objects: readonly Claimable[],
    mark: string,
  ): Promise<boolean[]> {
    if (objects.length === 0) return [];
    // One MGET: every claim key sits in the tenant's slot.
    const found = await this.redis
      .mget(objects.map((o) => this.claimKey(tenant, family, o.id, mark)))
      .catch(this.fail('claimed'));
    return found.map((v) => v !== null);
  }

  async claim(tenant: string, family: ClaimScope, object: Claimable, mark: string): Promise<boolean> {
    const key = this.claimKey(tenant, family, object.id, mark);
    const set = await this.redis.set(key, '1', 'PX', OWNED_MAX_AGE_MS, 'NX').catch(this.fail('claim'));
    return set === 'OK';
  }
}
