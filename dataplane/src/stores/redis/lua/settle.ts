/**
 * A metered request's settlement in one script: the budget settle, the rate limit's token
 * adjust and the usage record. The first two are the budget-settle and rate-adjust scripts' own
 * steps (steps.ts), called on their part of KEYS and ARGV; the usage record runs the record
 * script's body on copies of its part. All keys carry the tenant's hash tag.
 */
import { USAGE_RECORD_BODY } from '../../usage/lua.ts';
import type { LuaScript } from '../script.ts';
import { budgetSettle } from './budget.ts';
import { rateAdjust } from './rate-limit.ts';
import { BUDGET_BASE, BUDGET_SETTLE, LUA_HELPERS, RATE_ADJUST } from './steps.ts';

export const SETTLE_PARTS = {
  budget: { keys: budgetSettle.numberOfKeys, args: 6 },
  rate: { keys: rateAdjust.numberOfKeys, args: 4 },
} as const;

/**
 * Called with its number of keys first (it varies: a part may be absent).
 * ARGV[1]: budget part present (1/0), ARGV[2]: rate part present (1/0), then the budget settle's
 * 6 arguments when present, the rate adjust's 4 when present, then the usage record's.
 * KEYS in the same order: the budget's 5, the rate limit's 2, the usage record's 9.
 * Returns {budget reply or 0, rate reply or 0, usage reply}.
 */
export const settleScript: Omit<LuaScript, 'numberOfKeys'> = {
  name: 'gantrySettle',
  lua: `${LUA_HELPERS}${BUDGET_BASE}${BUDGET_SETTLE}${RATE_ADJUST}${USAGE_RECORD_BODY}
local k, a = 0, 2
local budget, rate = 0, 0
if ARGV[1] == '1' then
  budget = budgetSettle(KEYS[k + 1], KEYS[k + 2], KEYS[k + 3], KEYS[k + 4], KEYS[k + 5], ARGV[a + 1],
    tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3]), ARGV[a + 4], ARGV[a + 5], ARGV[a + 6])
  k, a = k + ${SETTLE_PARTS.budget.keys}, a + ${SETTLE_PARTS.budget.args}
end
if ARGV[2] == '1' then
  rate = rateAdjust(KEYS[k + 1], KEYS[k + 2], ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], ARGV[a + 4])
  k, a = k + ${SETTLE_PARTS.rate.keys}, a + ${SETTLE_PARTS.rate.args}
end
local function take(t, from, n)
  local out = {}
  for i = 1, n do out[i] = t[from + i] end
  return out
end
return {budget, rate, recordUsage(take(KEYS, k, #KEYS - k), take(ARGV, a, #ARGV - a))}
`,
};
