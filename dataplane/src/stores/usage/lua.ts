/**
 * The record script: dedupe, rollup, indexes, request log and security counters in one atomic
 * step (one round trip). The counter deltas come from `accumulate`, so the script only adds.
 */
import type { LuaScript } from '../redis/script.ts';

/**
 * `recordUsage(KEYS, ARGV)` as a Lua function, so the settlement script can run it with its
 * own slice of keys and arguments.
 */
export const USAGE_RECORD_BODY = `
local function recordUsage(KEYS, ARGV)
  if not redis.call('SET', KEYS[1], '1', 'NX', 'PX', ARGV[1]) then return 0 end
  local i = 12
  local n = tonumber(ARGV[i])
  i = i + 1
  local created = false
  for c = 1, n do
    local v = redis.call('HINCRBY', KEYS[2], ARGV[i], ARGV[i + 1])
    if c == 1 then created = v == tonumber(ARGV[i + 1]) end
    i = i + 2
  end
  -- A day beyond the retention: see above.
  local ttl = tonumber(ARGV[2]) + 86400
  if created then redis.call('EXPIRE', KEYS[2], ttl) end
  -- Every record re-adds its cell to the indexes (O(1) each, inside this one script), so an
  -- index lost to eviction is rebuilt by the next record instead of hiding a live cell for
  -- good; an index that this re-creates (or that a new cell joins) gets its expiry.
  if redis.call('SADD', KEYS[3], ARGV[3]) == 1 or created then redis.call('EXPIRE', KEYS[3], ttl) end
  if redis.call('ZADD', KEYS[4], ARGV[5], ARGV[4]) == 1 or created then
    redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', '(' .. ARGV[6])
    redis.call('EXPIRE', KEYS[4], ttl)
  end
  if redis.call('SADD', KEYS[5], ARGV[7]) == 1 or created then redis.call('EXPIRE', KEYS[5], ttl) end
  if redis.call('SADD', KEYS[6], ARGV[8]) == 1 or created then redis.call('EXPIRE', KEYS[6], ttl) end
  if ARGV[9] ~= '' and (redis.call('SADD', KEYS[7], ARGV[9]) == 1 or created) then
    redis.call('EXPIRE', KEYS[7], ttl)
  end
  local length = redis.call('LPUSH', KEYS[8], ARGV[10])
  local limit = tonumber(ARGV[11])
  if length > limit then redis.call('LTRIM', KEYS[8], 0, limit - 1) end
  -- A log this push created (new, or lost to eviction) must not live for ever.
  if length == 1 or created then redis.call('EXPIRE', KEYS[8], ttl) end
  local m = tonumber(ARGV[i])
  i = i + 1
  for _ = 1, m do
    redis.call('HINCRBY', KEYS[9], ARGV[i], ARGV[i + 1])
    i = i + 2
  end
  if m > 0 then redis.call('EXPIRE', KEYS[9], ttl) end
  return 1
end
`;

/**
 * KEYS: seen marker, cell hash, day's cell set, days zset, keys set, models set, providers set,
 *       log list, day's security hash.
 * ARGV: dedupe ms, retention s, cell member, day, epoch day, oldest epoch day kept, key id,
 *       model, provider ('' = none), log entry, log limit,
 *       n counters, then n × (field, delta) with `requests` (delta 1) first, then m security
 *       fields, then m × (field, delta).
 * Returns 1 when recorded, 0 when the id was already recorded.
 *
 * Every record adds its cell to the indexes (cheap set adds in the script, so an index lost to
 * an evicting maxmemory policy is rebuilt by the cell's next record); expiries are set only
 * when a record creates its cell (`requests` comes back as 1) or re-creates an index entry:
 * everything a cell is listed in then lives a day longer than the cell itself can (the cell
 * is written at most until its day ends, a day after it was created), so no index expires
 * while a cell it lists is kept.
 */
export const usageRecord: LuaScript = {
  name: 'gantryUsageRecord',
  numberOfKeys: 9,
  lua: `${USAGE_RECORD_BODY}
return recordUsage(KEYS, ARGV)
`,
};
