// Test oracle: this script as it was before the scripts shared their steps (lua/steps.ts), frozen
// so the fuzz test in lua/steps.redis.test.ts can check the composed scripts against it.
/**
 * A metered request's settlement in one script: the budget settle, the rate limit's token
 * adjust and the usage record, their bodies run unchanged as local functions on their own
 * slices of KEYS and ARGV (as the admission script does). All keys carry the tenant's hash tag.
 */
import { USAGE_RECORD_BODY } from '../../../usage/lua.ts';
import type { LuaScript } from '../../script.ts';
import { budgetSettle } from './budget.ts';
import { rateAdjust } from './rate-limit.ts';

export const SETTLE_PARTS = {
  budget: { keys: budgetSettle.numberOfKeys, args: 6 },
  rate: { keys: rateAdjust.numberOfKeys, args: 4 },
} as const;

const asFunction = (name: string, s: LuaScript) => `local function ${name}(KEYS, ARGV)\n${s.lua}\nend\n`;

/**
 * Called with its number of keys first (it varies: a part may be absent).
 * ARGV[1]: budget part present (1/0), ARGV[2]: rate part present (1/0), then the budget settle's
 * 6 arguments when present, the rate adjust's 4 when present, then the usage record's.
 * KEYS in the same order: the budget's 5, the rate limit's 2, the usage record's 9.
 * Returns {budget reply or 0, rate reply or 0, usage reply}.
 */
export const settleScript: Omit<LuaScript, 'numberOfKeys'> = {
  name: 'gantrySettle',
  lua: `${asFunction('settleBudget', budgetSettle)}${asFunction('adjustRate', rateAdjust)}${USAGE_RECORD_BODY}
local k, a = 0, 2
local function take(t, from, n)
  local out = {}
  for i = 1, n do out[i] = t[from + i] end
  return out
end
local budget, rate = 0, 0
if ARGV[1] == '1' then
  budget = settleBudget(take(KEYS, k, ${SETTLE_PARTS.budget.keys}), take(ARGV, a, ${SETTLE_PARTS.budget.args}))
  k, a = k + ${SETTLE_PARTS.budget.keys}, a + ${SETTLE_PARTS.budget.args}
end
if ARGV[2] == '1' then
  rate = adjustRate(take(KEYS, k, ${SETTLE_PARTS.rate.keys}), take(ARGV, a, ${SETTLE_PARTS.rate.args}))
  k, a = k + ${SETTLE_PARTS.rate.keys}, a + ${SETTLE_PARTS.rate.args}
end
return {budget, rate, recordUsage(take(KEYS, k, #KEYS - k), take(ARGV, a, #ARGV - a))}
`,
};
