/**
 * The Redis cache entry store's scripts. Beside a tenant's entries sit three keys of its own
 * (same hash tag, so one Cluster slot): an index (ZSET member → expiry ms, by the store's
 * clock) of its entry and digest keys, the byte size of each entry (HASH member → bytes) and
 * the tenant's totals (HASH `entries`, `bytes`). Members are key names without the tenant's
 * `<prefix>:{<tenant>}:` base. Stats and flush read these instead of walking the keyspace.
 *
 * Redis drops expired entries by itself; their bookkeeping goes when a script next looks at the
 * index (`reap`: every put takes a few, stats takes them all), so expired entries never stay
 * counted. An entry evicted by maxmemory stays counted until its expiry. The three keys live
 * as long as the tenant's longest-lived entry.
 */
import type { LuaScript } from '../redis/script.ts';

/** Totals move with the index; once the index is empty nothing of the tenant's bookkeeping stays. */
const HELPERS = `
local function settle(idx, sizes, totals, dEntries, dBytes)
  if redis.call('EXISTS', idx) == 0 then
    redis.call('DEL', sizes, totals)
    return
  end
  if dEntries ~= 0 then redis.call('HINCRBY', totals, 'entries', dEntries) end
  if dBytes ~= 0 then redis.call('HINCRBY', totals, 'bytes', dBytes) end
end

local function reap(idx, sizes, totals, now, limit)
  local gone = redis.call('ZRANGEBYSCORE', idx, '-inf', now, 'LIMIT', 0, limit)
  if #gone == 0 then return 0 end
  local entries, bytes = 0, 0
  for _, m in ipairs(gone) do
    local len = redis.call('HGET', sizes, m)
    if len then
      entries = entries + 1
      bytes = bytes + tonumber(len)
    end
  end
  redis.call('ZREM', idx, unpack(gone))
  redis.call('HDEL', sizes, unpack(gone))
  settle(idx, sizes, totals, -entries, -bytes)
  return #gone
end
`;

/**
 * KEYS: index, sizes, totals, entry[, digest].
 * ARGV: now, ttl ms, expiresAt, json, entry member, reap limit[, digest member, entry id].
 * The tenants set is the caller's: it lives in another Cluster slot than these keys.
 */
export const cachePut = {
  name: 'gantryCachePut',
  maxKeys: 5,
  lua: `${HELPERS}
local idx, sizes, totals = KEYS[1], KEYS[2], KEYS[3]
reap(idx, sizes, totals, ARGV[1], tonumber(ARGV[6]))
local m = ARGV[5]
local ttl = tonumber(ARGV[2])
local len = string.len(ARGV[4])
local old = redis.call('HGET', sizes, m)
redis.call('SET', KEYS[4], ARGV[4], 'PX', ttl)
redis.call('ZADD', idx, ARGV[3], m)
redis.call('HSET', sizes, m, len)
if KEYS[5] then
  redis.call('SET', KEYS[5], ARGV[8], 'PX', ttl)
  redis.call('ZADD', idx, ARGV[3], ARGV[7])
end
if old then
  redis.call('HINCRBY', totals, 'bytes', len - tonumber(old))
else
  redis.call('HINCRBY', totals, 'entries', 1)
  redis.call('HINCRBY', totals, 'bytes', len)
end
-- Each key on its own: Redis deletes an emptied hash, which may come back without a TTL.
for _, k in ipairs({idx, sizes, totals}) do
  if redis.call('PTTL', k) < ttl then redis.call('PEXPIRE', k, ttl) end
end
return 1
`,
};

/** KEYS: index, sizes, totals, entry. ARGV: entry member. Returns 1 when the entry key existed. */
export const cacheForget: LuaScript = {
  name: 'gantryCacheForget',
  numberOfKeys: 4,
  lua: `${HELPERS}
local n = redis.call('DEL', KEYS[4])
local len = redis.call('HGET', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[1], ARGV[1])
if len then
  redis.call('HDEL', KEYS[2], ARGV[1])
  settle(KEYS[1], KEYS[2], KEYS[3], -1, -tonumber(len))
end
return n
`,
};

/**
 * KEYS: index, sizes, totals. ARGV: now, reap limit.
 * Returns {reaped, entries, bytes}: the caller asks again while `reaped` is the limit.
 */
export const cacheStats: LuaScript = {
  name: 'gantryCacheStats',
  numberOfKeys: 3,
  lua: `${HELPERS}
local reaped = reap(KEYS[1], KEYS[2], KEYS[3], ARGV[1], tonumber(ARGV[2]))
local t = redis.call('HMGET', KEYS[3], 'entries', 'bytes')
return {reaped, tonumber(t[1]) or 0, tonumber(t[2]) or 0}
`,
};

/**
 * KEYS: index, sizes, totals, then the keys of the members to delete (a batch the caller read
 * from the index). ARGV: those members, in the same order.
 * Returns how many of them were entries still in Redis.
 */
export const cacheFlushBatch = {
  name: 'gantryCacheFlushBatch',
  lua: `${HELPERS}
local deleted, entries, bytes = 0, 0, 0
for i = 4, #KEYS do
  local m = ARGV[i - 3]
  local gone = redis.call('UNLINK', KEYS[i])
  local len = redis.call('HGET', KEYS[2], m)
  if len then
    entries = entries + 1
    bytes = bytes + tonumber(len)
    deleted = deleted + gone
  end
end
if #ARGV > 0 then
  redis.call('ZREM', KEYS[1], unpack(ARGV))
  redis.call('HDEL', KEYS[2], unpack(ARGV))
end
settle(KEYS[1], KEYS[2], KEYS[3], -entries, -bytes)
return deleted
`,
};
