// Test oracle: this script as it was before the scripts shared their steps (lua/steps.ts), frozen
// so the fuzz test in lua/steps.redis.test.ts can check the composed scripts against it.
/**
 * Sliding-window rate limit in Lua, mirroring sliding-window.ts. One sorted set per key holds
 * admitted requests as `id:tokens` scored by admission time; a counter beside it holds their
 * token total, so a decision costs O(log n) plus the entries that expire.
 */
import type { LuaScript } from '../../script.ts';

const WEIGHT = `
local function weight(member)
  return tonumber(string.match(member, ':(%d+)$')) or 0
end
`;

/**
 * KEYS: window zset, token counter.
 * ARGV: now, windowMs, rpm (0 = none), tpm (0 = none), estimate, id.
 * Returns {allowed, count, tokens, requestsRetryMs, tokensRetryMs, tokensExceedLimit, newestAt (-1 = none)}.
 */
export const rateAcquire: LuaScript = {
  name: 'gantryRateAcquire',
  numberOfKeys: 2,
  lua: `${WEIGHT}
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local rpm = tonumber(ARGV[3])
local tpm = tonumber(ARGV[4])
local est = tonumber(ARGV[5])
local cutoff = now - window

local stored = tonumber(redis.call('GET', KEYS[2]) or '0')
local sum = stored
local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', cutoff)
if #expired > 0 then
  for i = 1, #expired do sum = sum - weight(expired[i]) end
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', cutoff)
end
local count = redis.call('ZCARD', KEYS[1])
if count == 0 or sum < 0 then sum = 0 end
-- The pruned entries are gone from the set whatever the decision below, so the counter must
-- lose them now too: a refusal that left it stale would refuse later requests that fit.
-- INCRBY keeps the counter's expiry; it only ever lowers a counter that exists here.
if sum ~= stored then redis.call('INCRBY', KEYS[2], sum - stored) end

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

local allowed = 0
if reqRetry == 0 and tokRetry == 0 then
  allowed = 1
  redis.call('ZADD', KEYS[1], ARGV[1], ARGV[6] .. ':' .. ARGV[5])
  sum = sum + est
  count = count + 1
  redis.call('SET', KEYS[2], string.format('%d', sum), 'PX', window)
  redis.call('PEXPIRE', KEYS[1], window)
end
local newest = -1
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
if last[2] then newest = tonumber(last[2]) end
return {allowed, count, sum, reqRetry, tokRetry, exceeds, newest}
`,
};

/**
 * KEYS: window zset, token counter.
 * ARGV: old member, new member, token delta, windowMs.
 * Returns 1 when adjusted, 0 when the entry has left the window (or was adjusted already).
 */
export const rateAdjust: LuaScript = {
  name: 'gantryRateAdjust',
  numberOfKeys: 2,
  lua: `
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score then return 0 end
-- The new member first: removing an only entry first would delete the key and its expiry.
if ARGV[1] ~= ARGV[2] then
  redis.call('ZADD', KEYS[1], score, ARGV[2])
  redis.call('ZREM', KEYS[1], ARGV[1])
end
-- Both keys already expire a window after the newest admission (acquire set them together),
-- which is no earlier than this entry leaves the window: adjusting keeps their TTLs.
local sum = redis.call('INCRBY', KEYS[2], ARGV[3])
-- Never below zero; INCRBY (unlike SET) keeps the key's expiry.
if sum < 0 then redis.call('INCRBY', KEYS[2], -sum) end
if sum == tonumber(ARGV[3]) then redis.call('PEXPIRE', KEYS[2], ARGV[4]) end
return 1
`,
};
