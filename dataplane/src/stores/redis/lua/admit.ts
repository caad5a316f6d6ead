/**
 * Rate limit and budget in one script, so a key with both is admitted in one round trip. The
 * two scripts' bodies run unchanged as local functions (their KEYS and ARGV are parameters
 * here), in the order the separate calls had: count the request, then hold the estimate; a
 * budget refusal gives the counted tokens back as rateAdjust(ticket, 0) did. All keys carry
 * the tenant's hash tag, so one script may touch them all.
 */
import type { LuaScript } from '../script.ts';
import { budgetReserve } from './budget.ts';
import { rateAcquire, rateAdjust } from './rate-limit.ts';

const RATE_KEYS = rateAcquire.numberOfKeys;
const RATE_ARGS = 6;
const BUDGET_KEYS = budgetReserve.numberOfKeys;
const BUDGET_ARGS = 13;

const asFunction = (name: string, s: LuaScript) => `local function ${name}(KEYS, ARGV)\n${s.lua}\nend\n`;

/**
 * KEYS: the rate script's 2, then the budget reserve script's 7.
 * ARGV: the rate script's 6 (ARGV[5] estimate, ARGV[6] ticket id), then the reserve script's 13.
 * Returns {rate reply, budget reply} when the rate limit admitted, {rate reply, 0} when not.
 */
export const admitScript: LuaScript = {
  name: 'gantryAdmit',
  numberOfKeys: RATE_KEYS + BUDGET_KEYS,
  lua: `${asFunction('rateAcquire', rateAcquire)}${asFunction('rateAdjust', rateAdjust)}${asFunction('budgetReserve', budgetReserve)}
local function slice(t, from, n)
  local out = {}
  for i = 1, n do out[i] = t[from + i] end
  return out
end
local rateKeys = slice(KEYS, 0, ${RATE_KEYS})
local rateArgs = slice(ARGV, 0, ${RATE_ARGS})
local rate = rateAcquire(rateKeys, rateArgs)
if rate[1] ~= 1 then return {rate, 0} end
local budget = budgetReserve(slice(KEYS, ${RATE_KEYS}, ${BUDGET_KEYS}), slice(ARGV, ${RATE_ARGS}, ${BUDGET_ARGS}))
if budget[1] ~= 1 and rateArgs[5] ~= '0' then
  local id, est = rateArgs[6], rateArgs[5]
  rateAdjust(rateKeys, {id .. ':' .. est, id .. ':0', '-' .. est, rateArgs[2]})
end
return {rate, budget}
`,
};

export const ADMIT_ARGS = { rate: RATE_ARGS, budget: BUDGET_ARGS } as const;
