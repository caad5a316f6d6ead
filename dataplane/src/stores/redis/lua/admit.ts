/**
 * Rate limit and budget in one script, so a key with both is admitted in one round trip. It
 * runs the rate-only and budget-only scripts' own steps (steps.ts: rateDecide, budgetHold,
 * rateCount), so the same keys end with the same data and the same outcomes as those scripts
 * in turn (acquire, reserve, then a give-back of the counted tokens when the budget refuses),
 * minus the work the combination makes useless: the window's entry and counter are written
 * once, after the budget's answer, and the auto-recharge keys and arguments are sent only for
 * a key that recharges. All keys carry the tenant's hash tag, so one script may touch them all.
 */
import type { LuaScript } from '../script.ts';
import { BUDGET_BASE, BUDGET_HOLD, LUA_HELPERS, RATE_DECIDE } from './steps.ts';

/** Keys of every admission, then the auto-recharge ones (only when the key recharges). */
export const ADMIT_KEYS = { base: 6, recharge: 3 } as const;
/** Arguments of every admission, then the auto-recharge ones. */
export const ADMIT_ARGS = { base: 10, recharge: 7 } as const;

/**
 * KEYS: rate window zset, rate token counter, budget hash, period spent, reservations hash,
 *       reservation expiry zset; with auto-recharge also month recharged, wallet hash, ledger.
 * ARGV: now, windowMs, rpm (0 = none), tpm (0 = none), token estimate, ticket id, limit,
 *       estimate (micro-dollars), reservation id, expiresAt; with auto-recharge also threshold,
 *       amount, monthly cap, month retention ms, key id, reference, ledger entries kept.
 * Returns {rate reply, budget reply} when the rate limit admitted, {rate reply, 0} when not:
 * rate reply {allowed, count, tokens, requestsRetryMs, tokensRetryMs, tokensExceedLimit,
 * newestAt (-1 = none)}, budget reply {ok, available (after the hold when ok), recharged}.
 */
export const admitScript: Omit<LuaScript, 'numberOfKeys'> & { maxKeys: number } = {
  name: 'gantryAdmit',
  // The key count varies (the recharge keys are optional): each call sends its own.
  maxKeys: ADMIT_KEYS.base + ADMIT_KEYS.recharge,
  lua: `${LUA_HELPERS}${RATE_DECIDE}${BUDGET_BASE}${BUDGET_HOLD}
local rpm = tonumber(ARGV[3])
local est = tonumber(ARGV[5])
local rate, sum = rateDecide(KEYS[1], KEYS[2], ARGV[1], tonumber(ARGV[2]), rpm, tonumber(ARGV[4]), est)
if rate[1] == 0 then return {rate, 0} end

local rc = nil
if #KEYS == 9 then
  rc = {month = KEYS[7], wallet = KEYS[8], ledger = KEYS[9], threshold = tonumber(ARGV[11]),
    amount = tonumber(ARGV[12]), cap = tonumber(ARGV[13]), retention = ARGV[14], keyId = ARGV[15], ref = ARGV[16],
    maxLen = tonumber(ARGV[17])}
end
local ok, avail, recharged = budgetHold(KEYS[3], KEYS[4], KEYS[5], KEYS[6], ARGV[1], tonumber(ARGV[7]),
  tonumber(ARGV[8]), ARGV[9], ARGV[10], rc)

-- The request's entry in the window. A budget refusal counts the request but not its tokens
-- (the separate scripts added the estimate, then gave it back): the entry weighs 0 then, and
-- is written only when requests are limited: without a request limit it counts nothing, and
-- refusals would grow the set that the token walk reads. An admitted request's entry is
-- always written, as its settlement corrects the entry's weight to the tokens used.
local counted = est
if ok == 0 then counted = 0 end
local entry = nil
if ok == 1 or rpm > 0 then entry = ARGV[6] .. ':' .. int(counted) end
rateCount(KEYS[1], KEYS[2], ARGV[1], ARGV[2], entry, sum + counted)
return {rate, {ok, avail, recharged}}
`,
};
