/**
 * Budget scripts, mirroring budget-math.ts and recharge.ts: the budget-only hold and the
 * settle, made of the same steps as the admission and settlement scripts (steps.ts). All
 * amounts are integer micro-dollars. Every key is in the tenant's hash slot.
 */
import type { LuaScript } from '../script.ts';
import { BUDGET_BASE, BUDGET_HOLD, BUDGET_SETTLE, LUA_HELPERS } from './steps.ts';

/**
 * KEYS: budget hash, period spent, reservations hash, reservation expiry zset, month recharged,
 *       wallet hash, ledger stream.
 * ARGV: now, limit, estimate, reservation id, expiresAt, spent retention ms (0 = keep),
 *       recharge enabled (1/0), threshold, amount, monthly cap, month retention ms, key id, reference,
 *       ledger entries kept.
 * Returns {ok, available (after the hold when ok), recharged}.
 */
export const budgetReserve: LuaScript = {
  name: 'gantryBudgetReserve',
  numberOfKeys: 7,
  lua: `${LUA_HELPERS}${BUDGET_BASE}${BUDGET_HOLD}
local rc = nil
if ARGV[7] == '1' then
  rc = {month = KEYS[5], wallet = KEYS[6], ledger = KEYS[7], threshold = tonumber(ARGV[8]),
    amount = tonumber(ARGV[9]), cap = tonumber(ARGV[10]), retention = ARGV[11], keyId = ARGV[12], ref = ARGV[13],
    maxLen = tonumber(ARGV[14])}
end
local ok, avail, recharged = budgetHold(KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[1], tonumber(ARGV[2]),
  tonumber(ARGV[3]), ARGV[4], ARGV[5], rc)
return {ok, avail, recharged}
`,
};

/**
 * Settle, release and direct charge in one script.
 * KEYS: budget hash, period spent, reservations hash, reservation expiry zset, settled marker.
 * ARGV: reservation id, amount, limit, spent retention ms (0 = keep), settled memory ms, now.
 * Returns {applied, charged, available}.
 */
export const budgetSettle: LuaScript = {
  name: 'gantryBudgetSettle',
  numberOfKeys: 5,
  lua: `${LUA_HELPERS}${BUDGET_BASE}${BUDGET_SETTLE}
return budgetSettle(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]),
  ARGV[4], ARGV[5], ARGV[6])
`,
};

/**
 * A reservation becomes a long-lived hold of its own (BudgetStore.retain).
 * KEYS: budget hash, reservations hash, reservation expiry zset, the hold's settled marker.
 * ARGV: reservation id, hold id, amount, hold expiresAt, now.
 * Returns 1 when the hold is kept, 0 when its id was settled already (only the reservation goes).
 */
export const budgetRetain: LuaScript = {
  name: 'gantryBudgetRetain',
  numberOfKeys: 4,
  lua: `${LUA_HELPERS}${BUDGET_BASE}
local h = redis.call('HGET', KEYS[1], 'held')
local held0 = num(h)
local held = dropExpired(held0, KEYS[2], KEYS[3], ARGV[5])
local function drop(id)
  local amount = redis.call('HGET', KEYS[2], id)
  if amount then
    redis.call('HDEL', KEYS[2], id)
    redis.call('ZREM', KEYS[3], id)
    held = held - tonumber(amount)
  end
end
drop(ARGV[1])
local kept = 0
-- A settlement that came first left its marker: holding now would hold what nothing releases.
if redis.call('EXISTS', KEYS[4]) == 0 then
  -- A repeat (a reply lost, the call retried) replaces the hold instead of adding to it.
  drop(ARGV[2])
  local amount = tonumber(ARGV[3])
  redis.call('HSET', KEYS[2], ARGV[2], int(amount))
  redis.call('ZADD', KEYS[3], ARGV[4], ARGV[2])
  held = held + amount
  kept = 1
end
held = checked(held, KEYS[3])
if held ~= held0 then redis.call('HSET', KEYS[1], 'held', int(held)) end
return kept
`,
};

/**
 * KEYS: budget hash, period spent, reservations hash, reservation expiry zset, month recharged.
 * ARGV: now. Read-only: expired holds are left for the next write to remove.
 * Returns {spent, credit, held, rechargedThisMonth}.
 */
export const budgetState: LuaScript = {
  name: 'gantryBudgetState',
  numberOfKeys: 5,
  lua: `
local function num(v) return tonumber(v or '0') or 0 end
local held = num(redis.call('HGET', KEYS[1], 'held'))
local expired = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', ARGV[1])
for i = 1, #expired do held = held - num(redis.call('HGET', KEYS[3], expired[i])) end
if held < 0 or redis.call('ZCARD', KEYS[4]) == #expired then held = 0 end
return {num(redis.call('GET', KEYS[2])), num(redis.call('HGET', KEYS[1], 'credit')), held, num(redis.call('GET', KEYS[5]))}
`,
};
