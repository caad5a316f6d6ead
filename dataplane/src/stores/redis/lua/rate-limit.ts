/**
 * Sliding-window rate limit in Lua, mirroring sliding-window.ts: the rate-only scripts, made of
 * the same steps as the admission script (steps.ts). A decision costs O(log n) plus the entries
 * that expire.
 */
import type { LuaScript } from '../script.ts';
import { LUA_HELPERS, RATE_ADJUST, RATE_DECIDE } from './steps.ts';

/**
 * KEYS: window zset, token counter.
 * ARGV: now, windowMs, rpm (0 = none), tpm (0 = none), estimate, id.
 * Returns {allowed, count, tokens, requestsRetryMs, tokensRetryMs, tokensExceedLimit, newestAt (-1 = none)}.
 */
export const rateAcquire: LuaScript = {
  name: 'gantryRateAcquire',
  numberOfKeys: 2,
  lua: `${LUA_HELPERS}${RATE_DECIDE}
local est = tonumber(ARGV[5])
local rate, sum = rateDecide(KEYS[1], KEYS[2], ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), est)
if rate[1] == 1 then rateCount(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[6] .. ':' .. int(est), sum + est) end
return rate
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
  lua: `${RATE_ADJUST}
return rateAdjust(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3], ARGV[4])
`,
};
