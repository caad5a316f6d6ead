/**
 * The money scripts' steps, each written once as a Lua local function that takes its keys and
 * arguments as parameters: the admission script, the rate-only and budget-only scripts and the
 * settlement scripts are composed from these texts, so the same step runs the same Lua whichever
 * path a key takes. Parameters, not KEYS/ARGV slices: a step reads nothing its caller did not
 * hand it, and composing costs no table copies. Amounts are integer micro-dollars or tokens,
 * written with %d so large values never turn into exponent notation.
 */

/** Used by the steps below (the rate adjust needs neither). */
export const LUA_HELPERS = `
local function num(v) return tonumber(v or '0') or 0 end
local function int(x) return string.format('%d', x) end
`;

/**
 * ledgerAppend(wallet, ledger, nowArg, kind, amount, balance, keyId, ref, maxLen): appends a
 * movement to the tenant's ledger stream (amount and balance as integer strings), then trims
 * the stream back to its newest `maxLen` entries once it is a tenth over (ledgerTrimCount in
 * wallet.ts, at most 100 entries an append), adding what it takes out to the wallet hash's
 * `trimmed` (µ$) and `trimmedCount`: trimmed sum + kept entries still equal the balance.
 * Needs LUA_HELPERS. Returns the entry's id.
 */
export const LEDGER_APPEND = `
local function ledgerAppend(wallet, ledger, nowArg, kind, amount, balance, keyId, ref, maxLen)
  local id = redis.call('XADD', ledger, '*', 'at', nowArg, 'kind', kind, 'amount', amount,
    'balance', balance, 'keyId', keyId, 'ref', ref)
  local length = redis.call('XLEN', ledger)
  local over = length - maxLen
  if over >= math.min(100, math.max(1, math.floor(maxLen / 10))) then
    local gone = redis.call('XRANGE', ledger, '-', '+', 'COUNT', math.min(over, 100))
    local sum = 0
    for i = 1, #gone do
      local f = gone[i][2]
      for j = 1, #f, 2 do
        if f[j] == 'amount' then sum = sum + tonumber(f[j + 1]) end
      end
    end
    redis.call('XTRIM', ledger, 'MAXLEN', length - #gone)
    redis.call('HINCRBY', wallet, 'trimmed', int(sum))
    redis.call('HINCRBY', wallet, 'trimmedCount', #gone)
  end
  return id
end
`;

/**
 * The sliding window (mirrors sliding-window.ts): a sorted set of admitted requests as
 * `id:tokens` scored by admission time, and a counter of their tokens beside it.
 *
 * RATE_DECIDE (rateDecide, rateCount) and RATE_ADJUST (rateAdjust) are separate texts so
 * a script defines only the functions it runs.
 *
 * rateDecide(window, counter, nowArg, windowMs, rpm, tpm, est): prunes entries that left the
 * window, then decides whether one more request of `est` tokens fits (rpm/tpm 0 = no limit).
 * Returns the reply {allowed, count, tokens, requestsRetryMs, tokensRetryMs, tokensExceedLimit,
 * newestAt (-1 = none)} as it is once the request is counted, and the tokens before it. A
 * refusal is complete when it returns (the counter has lost the pruned entries); an admission
 * still has to be counted with rateCount.
 *
 * rateCount(window, counter, nowArg, windowMs, entry, total): writes the request's entry (when
 * `entry` is not nil) and the window's new token total; both keys then expire a window after
 * this, the newest admission.
 *
 * rateAdjust(window, counter, oldEntry, newEntry, delta, windowMs): the token correction once
 * the real count is known. Returns 1, or 0 when the entry has left the window (or was adjusted).
 */
export const RATE_DECIDE = `
local function weight(member) return tonumber(string.match(member, ':(%d+)$')) or 0 end

local function rateDecide(w, t, nowArg, window, rpm, tpm, est)
  local now = tonumber(nowArg)
  local cutoff = now - window
  local stored = tonumber(redis.call('GET', t) or '0')
  local sum = stored
  local expired = redis.call('ZRANGEBYSCORE', w, '-inf', cutoff)
  if #expired > 0 then
    for i = 1, #expired do sum = sum - weight(expired[i]) end
    redis.call('ZREMRANGEBYSCORE', w, '-inf', cutoff)
  end
  local count = redis.call('ZCARD', w)
  if count == 0 or sum < 0 then sum = 0 end

  local reqRetry, tokRetry, exceeds = 0, 0, 0
  if rpm > 0 and count + 1 > rpm then
    local e = redis.call('ZRANGE', w, count - rpm, count - rpm, 'WITHSCORES')
    if e[2] then reqRetry = tonumber(e[2]) + window - now else reqRetry = window end
  end
  if tpm > 0 and sum + est > tpm then
    tokRetry = window
    if est > tpm then
      exceeds = 1
    else
      local need = sum + est - tpm
      local freed = 0
      local entries = redis.call('ZRANGE', w, 0, -1, 'WITHSCORES')
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
    -- The pruned entries are gone from the set, so the counter loses them too (INCRBY keeps
    -- its expiry): a stale counter would refuse later requests that fit.
    if sum ~= stored then redis.call('INCRBY', t, sum - stored) end
    local newest = -1
    local last = redis.call('ZRANGE', w, -1, -1, 'WITHSCORES')
    if last[2] then newest = tonumber(last[2]) end
    return {0, count, sum, reqRetry, tokRetry, exceeds, newest}, sum
  end
  -- The newest admission is this one unless another pod's clock is ahead: only an entry later
  -- than now can change it.
  local newest = now
  local later = redis.call('ZREVRANGEBYSCORE', w, '+inf', '(' .. nowArg, 'WITHSCORES', 'LIMIT', 0, 1)
  if later[2] then newest = tonumber(later[2]) end
  return {1, count + 1, sum + est, 0, 0, 0, newest}, sum
end

local function rateCount(w, t, nowArg, windowArg, entry, total)
  if entry then redis.call('ZADD', w, nowArg, entry) end
  redis.call('SET', t, int(total), 'PX', windowArg)
  redis.call('PEXPIRE', w, windowArg)
end
`;

/** See RATE_DECIDE. */
export const RATE_ADJUST = `
local function rateAdjust(w, t, oldEntry, newEntry, delta, windowArg)
  local score = redis.call('ZSCORE', w, oldEntry)
  if not score then return 0 end
  -- The new entry first: removing an only entry first would delete the key and its expiry.
  if oldEntry ~= newEntry then
    redis.call('ZADD', w, score, newEntry)
    redis.call('ZREM', w, oldEntry)
  end
  -- Both keys already expire a window after the newest admission (rateCount set them
  -- together), which is no earlier than this entry leaves the window: adjusting keeps their TTLs.
  local sum = redis.call('INCRBY', t, delta)
  -- Never below zero; INCRBY (unlike SET) keeps the key's expiry.
  if sum < 0 then redis.call('INCRBY', t, -sum) end
  if sum == tonumber(delta) then redis.call('PEXPIRE', t, windowArg) end
  return 1
end
`;

/**
 * Budgets (mirror budget-math.ts and recharge.ts): a hash of `held` and `credit`, the period's
 * spend counter, and the holds as a hash (id -> amount) with an expiry set beside it.
 *
 * BUDGET_BASE holds what both need: dropExpired, checked and available.
 *
 * budgetHold(budget, spent, holds, holdExpiry, nowArg, limit, cost, holdId, expiresAt, rc):
 * drops lapsed holds, auto-recharges from the wallet when `rc` is given ({month counter, wallet,
 * ledger, threshold, amount, cap, retention (the month counter's, ms), keyId, ref, maxLen (the
 * ledger's bound)}) and the hold then fits (a refusal writes no recharge), then holds `cost`
 * when it fits.
 * Returns ok (1/0), available (after the hold when ok), recharged.
 *
 * budgetSettle(budget, spent, holds, holdExpiry, marker, holdId, amount, limit, retentionMs
 * ('0' = keep), markerMs, nowArg): replaces the hold with the charge, once per hold id (a direct
 * charge settles an id that holds nothing; a release charges 0). Returns {applied, charged,
 * available}.
 */
export const BUDGET_BASE = `
-- Drops holds whose reservation expired from \`held\` (the hash's total, read by the caller);
-- returns the held total that remains.
local function dropExpired(held, res, resexp, nowArg)
  local expired = redis.call('ZRANGEBYSCORE', resexp, '-inf', nowArg, 'LIMIT', 0, 512)
  if #expired > 0 then
    for i = 1, #expired do held = held - num(redis.call('HGET', res, expired[i])) end
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
local function available(limit, spent, credit, held)
  local allowance = limit - spent
  if allowance < 0 then allowance = 0 end
  return allowance + credit - held
end
`;

/** See BUDGET_BASE; needs it (LEDGER_APPEND comes with it). */
export const BUDGET_HOLD = `${LEDGER_APPEND}
local function budgetHold(b, spentKey, res, resexp, nowArg, limit, cost, holdId, expiresAt, rc)
  local h = redis.call('HMGET', b, 'held', 'credit')
  local held0 = num(h[1])
  local held = checked(dropExpired(held0, res, resexp, nowArg), resexp)
  local credit = num(h[2])
  local avail = available(limit, num(redis.call('GET', spentKey)), credit, held)

  local recharged = 0
  if rc then
    local after = avail - cost
    if rc.amount > 0 and after < rc.threshold then
      local needed = math.ceil((rc.threshold - after) / rc.amount)
      local month = num(redis.call('GET', rc.month))
      local capRoom = math.floor(math.max(0, rc.cap - month) / rc.amount)
      local wallet = num(redis.call('HGET', rc.wallet, 'balance'))
      local walletRoom = math.floor(math.max(0, wallet) / rc.amount)
      local n = math.max(0, math.min(needed, capRoom, walletRoom))
      -- Only for a hold it lets through: a refused request moves nothing (rechargeForHold).
      local moved = n * rc.amount
      if n > 0 and avail + moved > 0 and cost <= avail + moved then
        recharged = moved
        redis.call('HINCRBY', b, 'credit', int(recharged))
        redis.call('INCRBY', rc.month, int(recharged))
        redis.call('PEXPIRE', rc.month, rc.retention)
        local balance = redis.call('HINCRBY', rc.wallet, 'balance', int(-recharged))
        ledgerAppend(rc.wallet, rc.ledger, nowArg, 'recharge', int(-recharged), int(balance), rc.keyId, rc.ref,
          rc.maxLen)
        avail = avail + recharged
      end
    end
  end

  local ok = 0
  if avail > 0 and cost <= avail then
    ok = 1
    held = held + cost
    avail = avail - cost
    redis.call('HSET', res, holdId, int(cost))
    redis.call('ZADD', resexp, expiresAt, holdId)
  end
  if held ~= held0 then redis.call('HSET', b, 'held', int(held)) end
  return ok, avail, recharged
end
`;

/** See BUDGET_BASE; needs it. */
export const BUDGET_SETTLE = `
local function budgetSettle(b, spentKey, res, resexp, marker, holdId, amount, limit, retention, markerMs, nowArg)
  local h = redis.call('HMGET', b, 'held', 'credit')
  local held0 = num(h[1])
  -- Expired holds and this one leave the total first; the check for a total with no holds
  -- behind it runs once, on what is left.
  local held = dropExpired(held0, res, resexp, nowArg)
  local credit = num(h[2])
  local applied, charged, spent = 0, 0, nil
  -- The marker goes first: a second settle of the same id finds it and changes nothing.
  if redis.call('SET', marker, '1', 'NX', 'PX', markerMs) then
    applied = 1
    local hold = redis.call('HGET', res, holdId)
    if hold then
      redis.call('HDEL', res, holdId)
      redis.call('ZREM', resexp, holdId)
      held = held - tonumber(hold)
    end
  end
  held = checked(held, resexp)
  if applied == 1 and amount > 0 then
    spent = redis.call('INCRBY', spentKey, int(amount))
    -- The period's counter gets its expiry when this charge creates it; it never loses it
    -- (INCRBY keeps it), and the retention runs to the period's end plus a grace either way.
    if retention ~= '0' and spent == amount then redis.call('PEXPIRE', spentKey, retention) end
    -- The period's allowance before this charge pays first; credit (never below zero) the rest.
    local allowance = limit - (spent - amount)
    if allowance < 0 then allowance = 0 end
    local fromCredit = amount - math.min(amount, allowance)
    if fromCredit > credit then fromCredit = credit end
    if fromCredit > 0 then credit = redis.call('HINCRBY', b, 'credit', int(-fromCredit)) end
    charged = amount
  end
  if spent == nil then spent = num(redis.call('GET', spentKey)) end
  if held ~= held0 then redis.call('HSET', b, 'held', int(held)) end
  return {applied, charged, available(limit, spent, credit, held)}
end
`;
