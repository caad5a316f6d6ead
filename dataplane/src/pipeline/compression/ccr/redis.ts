/**
 * CCR in Redis, shared by the pods of a cluster. One scope's keys carry the partition as
 * their hash tag (`<prefix>:ccr:{<partition>}:…`), so each script touches one slot:
 *   turn   – the scope's turn counter        seq  – filing counter (ordering)
 *   order  – ZSET id → filing seq (oldest first, for the 32-entry bound)
 *   idx    – HASH id → entry without content  data – HASH id → content (verbatim bytes)
 *   ment   – HASH id → turn last mentioned   size – HASH id → bytes of its index and content
 * Every key of a scope expires 30 minutes after its last use. The 512-scope bound is a ZSET
 * partition → last use (`<prefix>:ccr:lru`); scopes past it are deleted oldest first.
 *
 * Each scope also holds at most `maxScopeBytes` (index JSON and content, as Redis stores them;
 * 256 KiB by default), its oldest entries going first: with the 512-scope bound that caps the
 * store at 128 MiB, as much as the in-process store's 128 Mi characters. Without it, only
 * Redis' maxmemory did, and a Redis kept at `noeviction` for billing would have been filled by
 * context recovery until every tenant's admission writes failed.
 */
import type { Redis } from 'ioredis';
import { createRedisClient, toStoreError, type RedisClientOptions } from '../../../stores/redis/client.ts';
import { bindScript, type BoundScript } from '../../../stores/redis/script.ts';
import { systemClock, type Clock } from '../../../stores/types.ts';
import { CCR_ENTRY_LIFETIME_MS, CCR_FILES_PER_SCOPE, CCR_LIVE_SCOPES } from './limits.ts';
import type { CcrEntry, CcrIndexEntry, CcrStore, CcrTurn } from './types.ts';

const PARTS = ['turn', 'seq', 'order', 'idx', 'data', 'ment', 'size'] as const;

/** One scope's bytes at most: 512 scopes × 256 KiB = 128 MiB in all. */
export const DEFAULT_CCR_SCOPE_BYTES = 256 * 1024;

const TOUCH = `for i = 1, #KEYS do redis.call('PEXPIRE', KEYS[i], ARGV[1]) end`;

const OPEN_LUA = `
local turn = redis.call('INCR', KEYS[1])
${TOUCH}
local ids = redis.call('ZRANGE', KEYS[3], 0, -1)
if #ids == 0 then return {turn, {}, {}, {}} end
return {turn, ids, redis.call('HMGET', KEYS[4], unpack(ids)), redis.call('HMGET', KEYS[6], unpack(ids))}`;

// Removes entries from every per-entry key.
const FORGET = `
local function forget(ids)
  redis.call('ZREM', KEYS[3], unpack(ids))
  for k = 4, 7 do redis.call('HDEL', KEYS[k], unpack(ids)) end
end`;

// ARGV: lifetime, max entries, max bytes, then (id, index JSON, content) triples. An entry
// larger than the whole bound is not filed; past the bounds the oldest entries go.
const FILE_LUA = `${FORGET}
local maxBytes = tonumber(ARGV[3])
for i = 4, #ARGV, 3 do
  local bytes = string.len(ARGV[i + 1]) + string.len(ARGV[i + 2])
  if bytes <= maxBytes then
    local seq = redis.call('INCR', KEYS[2])
    redis.call('ZADD', KEYS[3], seq, ARGV[i])
    redis.call('HSET', KEYS[4], ARGV[i], ARGV[i + 1])
    redis.call('HSET', KEYS[5], ARGV[i], ARGV[i + 2])
    redis.call('HSET', KEYS[7], ARGV[i], bytes)
  end
end
local excess = redis.call('ZCARD', KEYS[3]) - tonumber(ARGV[2])
if excess > 0 then forget(redis.call('ZRANGE', KEYS[3], 0, excess - 1)) end
local total = 0
for _, b in ipairs(redis.call('HVALS', KEYS[7])) do total = total + tonumber(b) end
while total > maxBytes do
  local oldest = redis.call('ZRANGE', KEYS[3], 0, 0)[1]
  if not oldest then break end
  total = total - tonumber(redis.call('HGET', KEYS[7], oldest) or '0')
  forget({oldest})
end
${TOUCH}
return total`;

// ARGV: lifetime, turn, count of mentioned ids, mentioned ids…, then ids to read.
const RECALL_LUA = `
local n = tonumber(ARGV[3])
for i = 4, 3 + n do
  if redis.call('ZSCORE', KEYS[3], ARGV[i]) then redis.call('HSET', KEYS[6], ARGV[i], ARGV[2]) end
end
${TOUCH}
local ids = {}
for i = 4 + n, #ARGV do ids[#ids + 1] = ARGV[i] end
if #ids == 0 then return {{}, {}, {}} end
return {redis.call('HMGET', KEYS[4], unpack(ids)), redis.call('HMGET', KEYS[5], unpack(ids)), redis.call('HMGET', KEYS[6], unpack(ids))}`;

const DROP_LUA = `${FORGET}
forget(ARGV)
return 1`;

export interface RedisCcrOptions {
  prefix?: string;
  clock?: Clock;
  maxScopes?: number;
  /** Bytes (index JSON and content) one scope holds at most. */
  maxScopeBytes?: number;
}

type Stored = Omit<CcrIndexEntry, 'id' | 'mentionedTurn'>;

export class RedisCcrStore implements CcrStore {
  readonly backend = 'redis';
  private readonly redis: Redis;
  private readonly owned: boolean;
  private readonly prefix: string;
  private readonly clock: Clock;
  private readonly maxScopes: number;
  private readonly maxScopeBytes: number;
  private readonly scripts: Record<'open' | 'file' | 'recall' | 'drop', BoundScript>;

  constructor(client: Redis | RedisClientOptions, opts: RedisCcrOptions = {}) {
    this.owned = !('defineCommand' in client);
    this.redis = this.owned ? createRedisClient(client as RedisClientOptions) : (client as Redis);
    this.prefix = opts.prefix ?? 'gantry';
    this.clock = opts.clock ?? systemClock;
    this.maxScopes = opts.maxScopes ?? CCR_LIVE_SCOPES;
    this.maxScopeBytes = opts.maxScopeBytes ?? DEFAULT_CCR_SCOPE_BYTES;
    const n = PARTS.length;
    this.scripts = {
      open: bindScript(this.redis, { name: 'gantryCcrOpen', numberOfKeys: n, lua: OPEN_LUA }, 'ccr.open'),
      file: bindScript(this.redis, { name: 'gantryCcrFile', numberOfKeys: n, lua: FILE_LUA }, 'ccr.file'),
      recall: bindScript(
        this.redis,
        { name: 'gantryCcrRecall', numberOfKeys: n, lua: RECALL_LUA },
        'ccr.recall',
      ),
      drop: bindScript(this.redis, { name: 'gantryCcrDrop', numberOfKeys: n, lua: DROP_LUA }, 'ccr.drop'),
    };
  }

  private keys(partition: string): string[] {
    if (!/^[a-f0-9]{64}$/.test(partition)) throw new Error('CCR partition must be a hex SHA-256');
    return PARTS.map((p) => `${this.prefix}:ccr:{${partition}}:${p}`);
  }

  private get lruKey(): string {
    return `${this.prefix}:ccr:lru`;
  }

  private live(stored: Stored): boolean {
    return this.clock() - stored.storedAt < CCR_ENTRY_LIFETIME_MS;
  }

  async openTurn(partition: string): Promise<CcrTurn> {
    const keys = this.keys(partition);
    const [turn, ids, idx, ment] = (await this.scripts.open(keys, [CCR_ENTRY_LIFETIME_MS])) as [
      number,
      string[],
      (string | null)[],
      (string | null)[],
    ];
    await this.markUsed(partition);
    const entries: CcrIndexEntry[] = [];
    const expired: string[] = [];
    ids.forEach((id, i) => {
      const raw = idx[i];
      const stored = raw ? (JSON.parse(raw) as Stored) : undefined;
      if (!stored || !this.live(stored)) return void expired.push(id);
      const m = ment[i];
      entries.push({ id, ...stored, mentionedTurn: m ? Number(m) : undefined });
    });
    if (expired.length > 0) await this.scripts.drop(keys, expired);
    return { turn, entries };
  }

  async file(partition: string, entries: readonly Omit<CcrEntry, 'mentionedTurn'>[]): Promise<void> {
    if (entries.length === 0) return;
    const args: (string | number)[] = [CCR_ENTRY_LIFETIME_MS, CCR_FILES_PER_SCOPE, this.maxScopeBytes];
    for (const e of entries) {
      const stored: Stored = { label: e.label, keywords: e.keywords, storedAt: e.storedAt };
      args.push(e.id, JSON.stringify(stored), e.content);
    }
    await this.scripts.file(this.keys(partition), args);
    await this.markUsed(partition);
  }

  async recall(
    partition: string,
    ids: readonly string[],
    mentioned: readonly string[],
    turn: number,
  ): Promise<CcrEntry[]> {
    if (ids.length === 0 && mentioned.length === 0) return [];
    const args = [CCR_ENTRY_LIFETIME_MS, turn, mentioned.length, ...mentioned, ...ids];
    const [idx, data, ment] = (await this.scripts.recall(this.keys(partition), args)) as (string | null)[][];
    const out: CcrEntry[] = [];
    ids.forEach((id, i) => {
      const raw = idx?.[i];
      const content = data?.[i];
      if (!raw || content === null || content === undefined) return;
      const stored = JSON.parse(raw) as Stored;
      if (!this.live(stored)) return;
      const m = ment?.[i];
      out.push({ id, ...stored, content, mentionedTurn: m ? Number(m) : undefined });
    });
    return out;
  }

  /** Scope LRU: most recent last; scopes past the bound lose all their keys. */
  private async markUsed(partition: string): Promise<void> {
    try {
      const now = this.clock();
      // Scopes idle past the lifetime have expired by themselves: they are not live.
      await this.redis.zremrangebyscore(this.lruKey, '-inf', now - CCR_ENTRY_LIFETIME_MS);
      await this.redis.zadd(this.lruKey, now, partition);
      const excess = (await this.redis.zcard(this.lruKey)) - this.maxScopes;
      if (excess <= 0) return;
      const old = await this.redis.zrange(this.lruKey, 0, excess - 1);
      await Promise.all(old.map((p) => this.redis.del(...this.keys(p))));
      if (old.length > 0) await this.redis.zrem(this.lruKey, ...old);
    } catch (err) {
      throw toStoreError('ccr.lru', err);
    }
  }

  async close(): Promise<void> {
    if (this.owned) this.redis.disconnect();
  }
}
