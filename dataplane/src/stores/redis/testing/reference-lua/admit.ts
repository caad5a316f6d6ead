// Test oracle: this script as it was before the scripts shared their steps (lua/steps.ts), frozen
// so the fuzz test in lua/steps.redis.test.ts can check the composed scripts against it.
/**
 * Rate limit and budget in one script, so a key with both is admitted in one round trip. Same
 * keys, same data and the same outcomes as the separate scripts in turn (rate-limit.ts's
 * acquire, then budget.ts's reserve, then a give-back of the counted tokens when the budget
 * refuses), written as one straight run so a metered request costs Redis less: no call whose
 * result a later call overwrites, the newest admission read only when it can differ from this
 * one, and the auto-recharge keys and arguments sent only for a key that recharges. All keys
 * carry the tenant's hash tag, so one script may touch them all.
 */
import type { LuaScript } from '../../script.ts';

/** Keys of every admission, then the auto-recharge ones (only when the key recharges). */
export const ADMIT_KEYS = { base: 6, recharge: 3 } as const;
/** Arguments of every admission, then the auto-recharge ones. */
export const ADMIT_ARGS = { base: 10, recharge: 6 } as const;

/**
 * KEYS: rate window zset, rate token counter, budget hash, period spent, reservations hash,
 *       reservation expiry zset; with auto-recharge also month recharged, wallet hash, ledger.
 * ARGV: now, windowMs, rpm (0 = none), tpm (0 = none), token estimate, ticket id, limit,
 *       estimate (micro-dollars), reservation id, expiresAt; with auto-recharge also threshold,
 *       amount, monthly cap, month retention ms, key id, reference.
 * Returns {rate reply, budget reply} when the rate limit admitted, {rate reply, 0} when not:
 * rate reply {allowed, count, tokens, requestsRetryMs, tokensRetryMs, tokensExceedLimit,
 * newestAt (-1 = none)}, budget reply {ok, available (after the hold when ok), recharged}.
 */
export const admitScript: Omit<LuaScript, 'numberOfKeys'> & { maxKeys: number } = {
  name: 'gantryAdmit',
  // The key count varies (the recharge keys are optional): each call sends its own.
  maxKeys: ADMIT_KEYS.base + ADMIT_KEYS.recharge,
  lua: `
local function num(v) return tonumber(v or '0') or 0 end
local function int(x) return string.format('%d', x) end
local function weight(member) return tonumber(string.match(member, ':(%d+)$')) or 0 end
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local rpm = tonumber(ARGV[3])
local tpm = tonumber(ARGV[4])
local est = tonumber(ARGV[5])
local cutoff = now - window

-- The rate limit (rate-limit.ts's acquire).
local stored = tonumber(redis.call('GET', KEYS[2]) or '0')
local sum = stored
local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', cutoff)
if #expired > 0 then
  for i = 1, #expired do sum = sum - weight(expired[i]) end
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', cutoff)
end
local count = redis.call('ZCARD', KEYS[1])
if count == 0 or sum < 0 then sum = 0 end

local reqRetry, tokRetry, exceeds = 0, 0, 0
if rpm > 0 and count + 1 > rpm then
  local e = redis.call('ZRANGE', KEYS[1], count - rpm, count - rpm, 'WITHSCORES')
  if e[2] then reqRetry = tonumber(e[2]) + window - now else reqRetry = window end
end
if tpm > 0 and sum + est > tpm then
  tokRetry = window
  if est > tpm then
    exceeds = 1
  else
    local need = sum + est - tpm
    local freed = 0
    local entries = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
    for i = 1, #entries, 2 do
      freed = freed + weight(entries[i])
      if freed >= need then
        tokRetry = tonumber(entries[i + 1]) + window - now
        break
      end
    end
  end
end

if reqRetry ~= 0 or tokRetry ~= 0 then
  -- The pruned entries are gone from the set, so the counter loses them too (INCRBY keeps its
  -- expiry): a stale counter would refuse later requests that fit.
  if sum ~= stored then redis.call('INCRBY', KEYS[2], sum - stored) end
  local newest = -1
  local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
  if last[2] then newest = tonumber(last[2]) end
  return {{0, count, sum, reqRetry, tokRetry, exceeds, newest}, 0}
end
-- Admitted by the rate limit. The newest admission is this one unless another pod's clock is
-- ahead: only an entry later than now can change it.
local newest = now
local later = redis.call('ZREVRANGEBYSCORE', KEYS[1], '+inf', '(' .. ARGV[1], 'WITHSCORES', 'LIMIT', 0, 1)
if later[2] then newest = tonumber(later[2]) end
local rate = {1, count + 1, sum + est, 0, 0, 0, newest}

-- The budget hold (budget.ts's reserve), its expired holds dropped first.
local limit = tonumber(ARGV[7])
local cost = tonumber(ARGV[8])
local b = redis.call('HMGET', KEYS[3], 'held', 'credit')
local held0 = num(b[1])
local held = held0
local lapsed = redis.call('ZRANGEBYSCORE', KEYS[6], '-inf', ARGV[1], 'LIMIT', 0, 512)
if #lapsed > 0 then
  for i = 1, #lapsed do held = held - num(redis.call('HGET', KEYS[5], lapsed[i])) end
  redis.call('HDEL', KEYS[5], unpack(lapsed))
  redis.call('ZREM', KEYS[6], unpack(lapsed))
end
-- No hold left means nothing is held, whatever rounding or a lost hold left in the total.
if held < 0 or (held > 0 and redis.call('ZCARD', KEYS[6]) == 0) then held = 0 end
local credit = num(b[2])
local spent = num(redis.call('GET', KEYS[4]))
local allowance = limit - spent
if allowance < 0 then allowance = 0 end
local avail = allowance + credit - held

local recharged = 0
if #KEYS == 9 then
  local threshold, amount, cap = tonumber(ARGV[11]), tonumber(ARGV[12]), tonumber(ARGV[13])
  local after = avail - cost
  if amount > 0 and after < threshold then
    local needed = math.ceil((threshold - after) / amount)
    local month = num(redis.call('GET', KEYS[7]))
    local capRoom = math.floor(math.max(0, cap - month) / amount)
    local wallet = num(redis.call('HGET', KEYS[8], 'balance'))
    local walletRoom = math.floor(math.max(0, wallet) / amount)
    local n = math.max(0, math.min(needed, capRoom, walletRoom))
    -- Amended with the composed scripts (not frozen here): a recharge only for a hold that then fits.
    if n > 0 and avail + n * amount > 0 and cost <= avail + n * amount then
      recharged = n * amount
      credit = redis.call('HINCRBY', KEYS[3], 'credit', int(recharged))
      redis.call('INCRBY', KEYS[7], int(recharged))
      redis.call('PEXPIRE', KEYS[7], ARGV[14])
      local balance = redis.call('HINCRBY', KEYS[8], 'balance', int(-recharged))
      redis.call('XADD', KEYS[9], '*', 'at', ARGV[1], 'kind', 'recharge', 'amount', int(-recharged),
        'balance', int(balance), 'keyId', ARGV[15], 'ref', ARGV[16])
      avail = avail + recharged
    end
  end
end

local ok = 0
if avail > 0 and cost <= avail then
  ok = 1
  held = held + cost
  avail = avail - cost
  redis.call('HSET', KEYS[5], ARGV[9], int(cost))
  redis.call('ZADD', KEYS[6], ARGV[10], ARGV[9])
end
if held ~= held0 then redis.call('HSET', KEYS[3], 'held', int(held)) end

-- The request's entry in the window. A budget refusal counts the request but not its tokens
-- (the separate scripts added the estimate, then gave it back): the entry weighs 0 then, and
-- is written only when requests are limited: without a request limit it counts nothing, and
-- refusals would grow the set that the token walk above reads. An admitted request's entry is
-- always written, as its settlement corrects the entry's weight to the tokens used.
local counted = est
if ok == 0 then counted = 0 end
if ok == 1 or rpm > 0 then redis.call('ZADD', KEYS[1], ARGV[1], ARGV[6] .. ':' .. int(counted)) end
redis.call('SET', KEYS[2], int(sum + counted), 'PX', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return {rate, {ok, avail, recharged}}
`,
};
