// Test oracle: this script as it was before the scripts shared their steps (lua/steps.ts), frozen
// so the fuzz test in lua/steps.redis.test.ts can check the composed scripts against it.
/**
 * Budget scripts, mirroring budget-math.ts and recharge.ts. All amounts are integer
 * micro-dollars; integers are written with %d so large values never turn into exponent
 * notation. Every key is in the tenant's hash slot.
 */
import type { LuaScript } from '../../script.ts';

const HELPERS = `
local function num(v) return tonumber(v or '0') or 0 end
local function int(x) return string.format('%d', x) end
-- Drops holds whose reservation expired from \`held\` (the hash's total, read by the caller);
-- returns the held total that remains.
local function dropExpired(held, res, resexp, now)
  local expired = redis.call('ZRANGEBYSCORE', resexp, '-inf', now, 'LIMIT', 0, 512)
  if #expired > 0 then
    for i = 1, #expired do
      held = held - num(redis.call('HGET', res, expired[i]))
    end
    redis.call('HDEL', res, unpack(expired))
    redis.call('ZREM', resexp, unpack(expired))
  end
  return held
end
-- No hold left means nothing is held, whatever rounding or a lost hold left in the total.
local function checked(held, resexp)
  if held < 0 or (held > 0 and redis.call('ZCARD', resexp) == 0) then return 0 end
  return held
end
-- Nothing expired and nothing held is one call.
local function expireHolds(held, res, resexp, now)
  return checked(dropExpired(held, res, resexp, now), resexp)
end
local function available(limit, spent, credit, held)
  local allowance = limit - spent
  if allowance < 0 then allowance = 0 end
  return allowance + credit - held
end
`;

/**
 * KEYS: budget hash, period spent, reservations hash, reservation expiry zset, month recharged,
 *       wallet hash, ledger stream.
 * ARGV: now, limit, estimate, reservation id, expiresAt, spent retention ms (0 = keep),
 *       recharge enabled (1/0), threshold, amount, monthly cap, month retention ms, key id, reference.
 * Returns {ok, available (after the hold when ok), recharged}.
 */
export const budgetReserve: LuaScript = {
  name: 'gantryBudgetReserve',
  numberOfKeys: 7,
  lua: `${HELPERS}
local now = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local est = tonumber(ARGV[3])
local b = redis.call('HMGET', KEYS[1], 'held', 'credit')
local held = expireHolds(num(b[1]), KEYS[3], KEYS[4], now)
local credit = num(b[2])
local spent = num(redis.call('GET', KEYS[2]))
local avail = available(limit, spent, credit, held)

local recharged = 0
if ARGV[7] == '1' then
  local threshold, amount, cap = tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10])
  local after = avail - est
  if amount > 0 and after < threshold then
    local needed = math.ceil((threshold - after) / amount)
    local month = num(redis.call('GET', KEYS[5]))
    local capRoom = math.floor(math.max(0, cap - month) / amount)
    local wallet = num(redis.call('HGET', KEYS[6], 'balance'))
    local walletRoom = math.floor(math.max(0, wallet) / amount)
    local n = math.max(0, math.min(needed, capRoom, walletRoom))
    -- Amended with the composed scripts (not frozen here): a recharge only for a hold that then fits.
    if n > 0 and avail + n * amount > 0 and est <= avail + n * amount then
      recharged = n * amount
      credit = redis.call('HINCRBY', KEYS[1], 'credit', int(recharged))
      redis.call('INCRBY', KEYS[5], int(recharged))
      redis.call('PEXPIRE', KEYS[5], ARGV[11])
      local balance = redis.call('HINCRBY', KEYS[6], 'balance', int(-recharged))
      redis.call('XADD', KEYS[7], '*', 'at', ARGV[1], 'kind', 'recharge', 'amount', int(-recharged),
        'balance', int(balance), 'keyId', ARGV[12], 'ref', ARGV[13])
      avail = avail + recharged
    end
  end
end

local ok = 0
if avail > 0 and est <= avail then
  ok = 1
  held = held + est
  avail = avail - est
  redis.call('HSET', KEYS[3], ARGV[4], int(est))
  redis.call('ZADD', KEYS[4], ARGV[5], ARGV[4])
end
if held ~= num(b[1]) then redis.call('HSET', KEYS[1], 'held', int(held)) end
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
  lua: `${HELPERS}
local amount = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local b = redis.call('HMGET', KEYS[1], 'held', 'credit')
-- Expired holds and this one leave the total first; the check for a total with no holds
-- behind it runs once, on what is left.
local held = dropExpired(num(b[1]), KEYS[3], KEYS[4], tonumber(ARGV[6]))
local credit = num(b[2])
local applied, charged, spent = 0, 0, nil
-- The marker goes first: a second settle of the same id finds it and changes nothing.
if redis.call('SET', KEYS[5], '1', 'NX', 'PX', ARGV[5]) then
  applied = 1
  local hold = redis.call('HGET', KEYS[3], ARGV[1])
  if hold then
    redis.call('HDEL', KEYS[3], ARGV[1])
    redis.call('ZREM', KEYS[4], ARGV[1])
    held = held - tonumber(hold)
  end
end
held = checked(held, KEYS[4])
if applied == 1 then
  if amount > 0 then
    spent = redis.call('INCRBY', KEYS[2], int(amount))
    -- The period's counter gets its expiry when this charge creates it; it never loses it
    -- (INCRBY keeps it), and the retention runs to the period's end plus a grace either way.
    if ARGV[4] ~= '0' and spent == amount then redis.call('PEXPIRE', KEYS[2], ARGV[4]) end
    -- The period's allowance before this charge pays first; credit (never below zero) the rest.
    local allowance = limit - (spent - amount)
    if allowance < 0 then allowance = 0 end
    local fromCredit = amount - math.min(amount, allowance)
    if fromCredit > credit then fromCredit = credit end
    if fromCredit > 0 then credit = redis.call('HINCRBY', KEYS[1], 'credit', int(-fromCredit)) end
    charged = amount
  end
end
if spent == nil then spent = num(redis.call('GET', KEYS[2])) end
if held ~= num(b[1]) then redis.call('HSET', KEYS[1], 'held', int(held)) end
return {applied, charged, available(limit, spent, credit, held)}
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
