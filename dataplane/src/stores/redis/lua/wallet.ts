/**
 * Wallet scripts: the balance (a hash field) and the ledger (a stream) change together. Stream
 * fields: at, kind, amount, balance, keyId, ref — amounts in integer micro-dollars. The ledger
 * keeps its newest entries; the hash sums the trimmed ones (`trimmed`, `trimmedCount`; see
 * ledgerAppend in steps.ts).
 */
import type { LuaScript } from '../script.ts';
import { LEDGER_APPEND, LUA_HELPERS } from './steps.ts';

/**
 * KEYS: wallet hash, ledger stream, idempotency marker.
 * ARGV: signed amount, kind, allow negative (1/0), now, key id, reference, use idempotency (1/0),
 *       idempotency ms, ledger entries kept.
 * Returns {1, id, balance} applied | {0, balance} refused | {2, id, fields} duplicate |
 * {3, id} duplicate whose entry the ledger has trimmed since.
 */
export const walletMove: LuaScript = {
  name: 'gantryWalletMove',
  numberOfKeys: 3,
  lua: `${LUA_HELPERS}${LEDGER_APPEND}
if ARGV[7] == '1' then
  local prior = redis.call('GET', KEYS[3])
  if prior then
    local found = redis.call('XRANGE', KEYS[2], prior, prior)
    if found[1] then return {2, prior, found[1][2]} end
    -- Trimmed from the ledger since, still a repeat: never applied twice.
    return {3, prior}
  end
end
local amount = tonumber(ARGV[1])
local balance = tonumber(redis.call('HGET', KEYS[1], 'balance') or '0')
if amount < 0 and ARGV[3] ~= '1' and balance + amount < 0 then return {0, balance} end
balance = redis.call('HINCRBY', KEYS[1], 'balance', ARGV[1])
local id = ledgerAppend(KEYS[1], KEYS[2], ARGV[4], ARGV[2], ARGV[1], int(balance), ARGV[5], ARGV[6], tonumber(ARGV[9]))
if ARGV[7] == '1' then redis.call('SET', KEYS[3], id, 'PX', ARGV[8]) end
return {1, id, balance}
`,
};

/**
 * KEYS: wallet hash, ledger stream. ARGV: configured amount, now, ledger entries kept.
 * Returns {0} when unchanged, {1, id, balance, delta} when a movement was booked.
 */
export const walletSyncConfigured: LuaScript = {
  name: 'gantryWalletSyncConfigured',
  numberOfKeys: 2,
  lua: `${LUA_HELPERS}${LEDGER_APPEND}
local prior = tonumber(redis.call('HGET', KEYS[1], 'configured') or '0')
local target = tonumber(ARGV[1])
redis.call('HSET', KEYS[1], 'configured', ARGV[1])
local delta = target - prior
if delta == 0 then return {0} end
local kind = 'topup'
if delta < 0 then kind = 'adjustment' end
local balance = redis.call('HINCRBY', KEYS[1], 'balance', int(delta))
local id = ledgerAppend(KEYS[1], KEYS[2], ARGV[2], kind, int(delta), int(balance), '', 'config', tonumber(ARGV[3]))
return {1, id, balance, delta}
`,
};

/**
 * Finishes a rebuild atomically: the caller read the trimmed sum and count together with the
 * ledger's first chunk, then summed the ledger up to `last id` in chunks; this adds what was
 * appended since and writes the balance, unless entries it never read were trimmed meanwhile
 * (the trimmed count and the stream's length then say fewer were read than exist).
 * KEYS: wallet hash, ledger stream. ARGV: last id read ('' = none), sum so far (the trimmed sum
 * included), entries accounted for so far (trimmed count + entries read).
 * Returns {1, balance, previous, tail entries} | {0} (entries were missed: read again).
 */
export const walletRebuildTail: LuaScript = {
  name: 'gantryWalletRebuildTail',
  numberOfKeys: 2,
  lua: `
local start = '-'
if ARGV[1] ~= '' then start = '(' .. ARGV[1] end
local sum = tonumber(ARGV[2])
local tail = redis.call('XRANGE', KEYS[2], start, '+')
local trimmedCount = tonumber(redis.call('HGET', KEYS[1], 'trimmedCount') or '0')
if trimmedCount + redis.call('XLEN', KEYS[2]) ~= tonumber(ARGV[3]) + #tail then return {0} end
for i = 1, #tail do
  local fields = tail[i][2]
  for j = 1, #fields, 2 do
    if fields[j] == 'amount' then sum = sum + tonumber(fields[j + 1]) end
  end
end
local previous = tonumber(redis.call('HGET', KEYS[1], 'balance') or '0')
redis.call('HSET', KEYS[1], 'balance', string.format('%d', sum))
return {1, sum, previous, #tail}
`,
};
