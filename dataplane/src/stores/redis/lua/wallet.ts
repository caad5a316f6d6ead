/**
 * Wallet scripts: the balance (a hash field) and the ledger (a stream) change together. Stream
 * fields: at, kind, amount, balance, keyId, ref — amounts in integer micro-dollars.
 */
import type { LuaScript } from '../script.ts';

/**
 * KEYS: wallet hash, ledger stream, idempotency marker.
 * ARGV: signed amount, kind, allow negative (1/0), now, key id, reference, use idempotency (1/0), idempotency ms.
 * Returns {1, id, balance} applied | {0, balance} refused | {2, id, fields} duplicate.
 */
export const walletMove: LuaScript = {
  name: 'gantryWalletMove',
  numberOfKeys: 3,
  lua: `
if ARGV[7] == '1' then
  local prior = redis.call('GET', KEYS[3])
  if prior then
    local found = redis.call('XRANGE', KEYS[2], prior, prior)
    if found[1] then return {2, prior, found[1][2]} end
  end
end
local amount = tonumber(ARGV[1])
local balance = tonumber(redis.call('HGET', KEYS[1], 'balance') or '0')
if amount < 0 and ARGV[3] ~= '1' and balance + amount < 0 then return {0, balance} end
balance = redis.call('HINCRBY', KEYS[1], 'balance', ARGV[1])
local id = redis.call('XADD', KEYS[2], '*', 'at', ARGV[4], 'kind', ARGV[2], 'amount', ARGV[1],
  'balance', string.format('%d', balance), 'keyId', ARGV[5], 'ref', ARGV[6])
if ARGV[7] == '1' then redis.call('SET', KEYS[3], id, 'PX', ARGV[8]) end
return {1, id, balance}
`,
};

/**
 * KEYS: wallet hash, ledger stream. ARGV: configured amount, now.
 * Returns {0} when unchanged, {1, id, balance, delta} when a movement was booked.
 */
export const walletSyncConfigured: LuaScript = {
  name: 'gantryWalletSyncConfigured',
  numberOfKeys: 2,
  lua: `
local prior = tonumber(redis.call('HGET', KEYS[1], 'configured') or '0')
local target = tonumber(ARGV[1])
redis.call('HSET', KEYS[1], 'configured', ARGV[1])
local delta = target - prior
if delta == 0 then return {0} end
local kind = 'topup'
if delta < 0 then kind = 'adjustment' end
local balance = redis.call('HINCRBY', KEYS[1], 'balance', string.format('%d', delta))
local id = redis.call('XADD', KEYS[2], '*', 'at', ARGV[2], 'kind', kind, 'amount', string.format('%d', delta),
  'balance', string.format('%d', balance), 'keyId', '', 'ref', 'config')
return {1, id, balance, delta}
`,
};

/**
 * Finishes a rebuild atomically: the caller summed the ledger up to `last id` in chunks; this
 * adds what was appended since and writes the balance.
 * KEYS: wallet hash, ledger stream. ARGV: last id read ('' = none), sum so far.
 * Returns {balance, previous, tail entries}.
 */
export const walletRebuildTail: LuaScript = {
  name: 'gantryWalletRebuildTail',
  numberOfKeys: 2,
  lua: `
local start = '-'
if ARGV[1] ~= '' then start = '(' .. ARGV[1] end
local sum = tonumber(ARGV[2])
local tail = redis.call('XRANGE', KEYS[2], start, '+')
for i = 1, #tail do
  local fields = tail[i][2]
  for j = 1, #fields, 2 do
    if fields[j] == 'amount' then sum = sum + tonumber(fields[j + 1]) end
  end
end
local previous = tonumber(redis.call('HGET', KEYS[1], 'balance') or '0')
redis.call('HSET', KEYS[1], 'balance', string.format('%d', sum))
return {sum, previous, #tail}
`,
};
