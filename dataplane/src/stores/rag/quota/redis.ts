/**
 * The chunk ledger in Redis, shared by every pod. Every key carries one hash tag, so the
 * tenant's count and the count of all tenants move in one script (one Redis Cluster slot;
 * ingest is rare and heavy, so one slot's load is no concern). Counts are integers in one
 * hash: `h` and `p` for all tenants (held, on hold), `h:<tenant>` and `p:<tenant>` per tenant,
 * `i:<tenant>:<key>:<index>` and `pi:<tenant>:<key>:<index>` per index (held, on hold); each
 * index has a hash of its documents' chunk counts. Holds are a hash (id →
 * `chunks:tenant:pi-field`; holds taken before the per-index count were `chunks:tenant`) plus
 * a sorted set of their lapse times; every reservation first hands back the room of lapsed holds.
 */
import type { Redis } from 'ioredis';
import { newId } from '../../ids.ts';
import type { Owner } from '../../owned/types.ts';
import { toStoreError } from '../../redis/client.ts';
import type { KeySpace } from '../../redis/keys.ts';
import { arg, bindScript, int, type BoundScript, type LuaScript } from '../../redis/script.ts';
import { systemClock, type Clock } from '../../types.ts';
import type { IndexCounts, RagQuotaLimits, RagQuotaStore, RagUsage, ReserveResult } from './types.ts';

const HELPERS = `
local function num(v) return tonumber(v or '0') or 0 end
local function bump(counts, field, delta)
  local n = num(redis.call('HGET', counts, field)) + delta
  if n <= 0 then redis.call('HDEL', counts, field) else redis.call('HSET', counts, field, string.format('%d', n)) end
end
-- Hands a hold's room back; false when the hold was already committed, returned or lapsed.
local function unhold(counts, holds, holdexp, id)
  redis.call('ZREM', holdexp, id)
  local v = redis.call('HGET', holds, id)
  if not v then return false end
  local n, tenant, rest = string.match(v, '^(%d+):([^:]*)(.*)$')
  bump(counts, 'p', -tonumber(n))
  bump(counts, 'p:' .. tenant, -tonumber(n))
  if rest ~= '' then bump(counts, string.sub(rest, 2), -tonumber(n)) end
  redis.call('HDEL', holds, id)
  return true
end
`;

/**
 * KEYS counts, holds, holdexp. ARGV tenant, chunks, per-tenant limit, total limit, id, now,
 * lapse time, per-index limit, the index's held field, its on-hold field, its legacy chunks.
 */
const reserveScript: LuaScript = {
  name: 'gantryRagQuotaReserve',
  numberOfKeys: 3,
  lua: `${HELPERS}
local lapsed = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', ARGV[6], 'LIMIT', 0, 512)
for i = 1, #lapsed do unhold(KEYS[1], KEYS[2], KEYS[3], lapsed[i]) end
local t, n = ARGV[1], tonumber(ARGV[2])
local c = redis.call('HMGET', KEYS[1], 'h:' .. t, 'p:' .. t, 'h', 'p', ARGV[9], ARGV[10])
local tenantUsed, totalUsed = num(c[1]) + num(c[2]), num(c[3]) + num(c[4])
local indexUsed = num(c[5]) + num(c[6]) + tonumber(ARGV[11])
if indexUsed + n > tonumber(ARGV[8]) then return {3, indexUsed} end
if tenantUsed + n > tonumber(ARGV[3]) then return {1, tenantUsed} end
if totalUsed + n > tonumber(ARGV[4]) then return {2, totalUsed} end
redis.call('HSET', KEYS[2], ARGV[5], ARGV[2] .. ':' .. t .. ':' .. ARGV[10])
redis.call('ZADD', KEYS[3], ARGV[7], ARGV[5])
bump(KEYS[1], 'p', n)
bump(KEYS[1], 'p:' .. t, n)
bump(KEYS[1], ARGV[10], n)
return {0, tenantUsed + n}
`,
};

/**
 * KEYS counts, holds, holdexp, the index's documents. ARGV tenant, hold id, document id,
 * chunks, the index's count field.
 */
const commitScript: LuaScript = {
  name: 'gantryRagQuotaCommit',
  numberOfKeys: 4,
  lua: `${HELPERS}
unhold(KEYS[1], KEYS[2], KEYS[3], ARGV[2])
local delta = tonumber(ARGV[4]) - num(redis.call('HGET', KEYS[4], ARGV[3]))
redis.call('HSET', KEYS[4], ARGV[3], ARGV[4])
bump(KEYS[1], 'h', delta)
bump(KEYS[1], 'h:' .. ARGV[1], delta)
bump(KEYS[1], ARGV[5], delta)
return delta
`,
};

/** KEYS counts, holds, holdexp. ARGV hold id. */
const releaseScript: LuaScript = {
  name: 'gantryRagQuotaRelease',
  numberOfKeys: 3,
  lua: `${HELPERS}
return unhold(KEYS[1], KEYS[2], KEYS[3], ARGV[1]) and 1 or 0
`,
};

/** KEYS counts, the index's documents. ARGV tenant, document id, the index's count field. Returns the chunks freed. */
const forgetDocumentScript: LuaScript = {
  name: 'gantryRagQuotaForgetDocument',
  numberOfKeys: 2,
  lua: `${HELPERS}
local n = num(redis.call('HGET', KEYS[2], ARGV[2]))
if redis.call('HDEL', KEYS[2], ARGV[2]) == 0 then return 0 end
bump(KEYS[1], 'h', -n)
bump(KEYS[1], 'h:' .. ARGV[1], -n)
bump(KEYS[1], ARGV[3], -n)
return n
`,
};

const enc = encodeURIComponent;

export class RedisRagQuotaStore implements RagQuotaStore {
  private readonly reserveHold: BoundScript;
  private readonly commitHold: BoundScript;
  private readonly releaseHold: BoundScript;
  private readonly forgetDoc: BoundScript;
  private readonly base: string;

  constructor(
    private readonly redis: Redis,
    keys: KeySpace,
    private readonly now: Clock = systemClock,
  ) {
    this.base = `${keys.prefix}:{rag-quota}`;
    this.reserveHold = bindScript(redis, reserveScript, 'rag.quota.reserve');
    this.commitHold = bindScript(redis, commitScript, 'rag.quota.commit');
    this.releaseHold = bindScript(redis, releaseScript, 'rag.quota.release');
    this.forgetDoc = bindScript(redis, forgetDocumentScript, 'rag.quota.forget');
  }

  private get holdKeys(): string[] {
    return [`${this.base}:counts`, `${this.base}:holds`, `${this.base}:holdexp`];
  }

  private documents(owner: Owner, index: string): string {
    return `${this.base}:docs:${enc(owner.tenant)}:${enc(owner.keyId)}:${enc(index)}`;
  }

  private static indexField(owner: Owner, index: string): string {
    return `i:${enc(owner.tenant)}:${enc(owner.keyId)}:${enc(index)}`;
  }

  /** Chunks on hold for the index (`pi:` never collides with a tenant's `p:<tenant>`). */
  private static pendingField(owner: Owner, index: string): string {
    return `p${RedisRagQuotaStore.indexField(owner, index)}`;
  }

  async reserve(
    owner: Owner,
    index: string,
    chunks: number,
    limits: RagQuotaLimits,
    holdMs: number,
    legacy = 0,
  ): Promise<ReserveResult> {
    const id = newId();
    const now = this.now();
    const out = (await this.reserveHold(this.holdKeys, [
      enc(owner.tenant),
      arg(chunks),
      arg(limits.perTenant),
      arg(limits.total),
      id,
      arg(now),
      arg(now + holdMs),
      arg(limits.perIndex),
      RedisRagQuotaStore.indexField(owner, index),
      RedisRagQuotaStore.pendingField(owner, index),
      arg(legacy),
    ])) as unknown[];
    const code = int(out[0], 'rag quota verdict');
    const used = int(out[1], 'rag quota usage');
    if (code === 0) return { ok: true, id };
    if (code === 3) return { ok: false, scope: 'index', limit: limits.perIndex, used };
    return code === 1
      ? { ok: false, scope: 'tenant', limit: limits.perTenant, used }
      : { ok: false, scope: 'store', limit: limits.total, used };
  }

  async commit(
    owner: Owner,
    index: string,
    holdId: string,
    documentId: string,
    chunks: number,
  ): Promise<void> {
    await this.commitHold(
      [...this.holdKeys, this.documents(owner, index)],
      [enc(owner.tenant), holdId, documentId, arg(chunks), RedisRagQuotaStore.indexField(owner, index)],
    );
  }

  async release(holdId: string): Promise<void> {
    await this.releaseHold(this.holdKeys, [holdId]);
  }

  async documentsOf(owner: Owner, index: string): Promise<Map<string, number>> {
    const all = await this.redis.hgetall(this.documents(owner, index)).catch((err: unknown) => {
      throw toStoreError('rag.quota.documents', err);
    });
    return new Map(Object.entries(all).map(([id, n]) => [id, Number(n)]));
  }

  async forgetDocument(owner: Owner, index: string, documentId: string): Promise<number> {
    const [counts] = this.holdKeys;
    return int(
      await this.forgetDoc(
        [counts!, this.documents(owner, index)],
        [enc(owner.tenant), documentId, RedisRagQuotaStore.indexField(owner, index)],
      ),
      'rag quota forget',
    );
  }

  async usage(tenant: string): Promise<RagUsage> {
    const t = enc(tenant);
    const c = await this.redis
      .hmget(this.holdKeys[0]!, `h:${t}`, `p:${t}`, 'h', 'p')
      .catch((err: unknown) => {
        throw toStoreError('rag.quota.usage', err);
      });
    const n = (i: number): number => Number(c[i] ?? 0);
    return { tenant: n(0) + n(1), total: n(2) + n(3) };
  }

  async indexCounts(owner: Owner, index: string): Promise<IndexCounts> {
    const [documents, [chunks, pending]] = await Promise.all([
      this.redis.hlen(this.documents(owner, index)),
      this.redis.hmget(
        this.holdKeys[0]!,
        RedisRagQuotaStore.indexField(owner, index),
        RedisRagQuotaStore.pendingField(owner, index),
      ),
    ]).catch((err: unknown) => {
      throw toStoreError('rag.quota.index', err);
    });
    return { documents, chunks: Number(chunks ?? 0), pending: Number(pending ?? 0) };
  }

  async present(owner: Owner, index: string, documentIds: readonly string[]): Promise<Set<string>> {
    if (documentIds.length === 0) return new Set();
    const found = await this.redis
      .hmget(this.documents(owner, index), ...documentIds)
      .catch((err: unknown) => {
        throw toStoreError('rag.quota.present', err);
      });
    return new Set(documentIds.filter((_, i) => found[i] !== null));
  }
}
