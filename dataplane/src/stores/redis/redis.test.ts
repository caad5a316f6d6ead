/** Redis-only behaviour: key layout, rebuilding a corrupted balance, long and trimmed ledgers. */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testRedisUrl } from '../../../../test/harness/redis.ts';
import { newId } from '../ids.ts';
import { createRedisStores, type Stores } from '../index.ts';
import { KeySpace } from './keys.ts';
import { walletRebuildTail } from './lua/wallet.ts';

describe('KeySpace', () => {
  const keys = new KeySpace('gantry');
  const k = { tenant: 'acme', keyId: 'ci' };

  it('puts every key of a tenant in one cluster slot via the {tenant} hash tag', () => {
    const all = [
      keys.rateWindow(k),
      keys.rateTokens(k),
      keys.budget(k),
      keys.spent(k, 'm2025-03'),
      keys.reservations(k),
      keys.reservationExpiry(k),
      keys.settled(k, 'x'),
      keys.recharged(k, '2025-03'),
      keys.wallet('acme'),
      keys.ledger('acme'),
      keys.walletIdempotency('acme', 'i'),
    ];
    for (const name of all) {
      expect(name.startsWith('gantry:{acme}:')).toBe(true);
      expect(name.match(/\{[^}]*\}/g)).toEqual(['{acme}']);
    }
    expect(new Set(all).size).toBe(all.length);
  });

  it('encodes names so no tenant or key can reach into another', () => {
    expect(keys.wallet('a}b')).toBe('gantry:{a%7Db}:wallet');
    expect(keys.budget({ tenant: 'a', keyId: 'b:budget' })).not.toBe(
      keys.budget({ tenant: 'a', keyId: 'b' }),
    );
    expect(keys.rateWindow({ tenant: 'a:key:b', keyId: 'c' })).not.toBe(
      keys.rateWindow({ tenant: 'a', keyId: 'b:key:c' }),
    );
  });
});

describe('redis wallet', () => {
  let raw: Redis;
  let stores: Stores;
  const prefix = `t-${newId()}`;

  beforeAll(async () => {
    raw = new Redis(testRedisUrl());
    stores = createRedisStores(raw, { prefix });
    await stores.ready();
  });

  afterAll(async () => {
    raw.disconnect();
  });

  it('rebuilds a corrupted balance from a ledger longer than one read chunk', async () => {
    const { wallets } = stores;
    const writes = Array.from({ length: 2500 }, (_, i) =>
      wallets.credit('acme', 'topup', { amountUsd: (i % 7) + 0.000001 }),
    );
    await Promise.all(writes);
    const expected = await wallets.balance('acme');
    await raw.hset(new KeySpace(prefix).wallet('acme'), 'balance', '42');
    expect(await wallets.balance('acme')).toBe(0.000042);
    expect(await wallets.rebuildBalance('acme')).toEqual({
      balanceUsd: expected,
      previousUsd: 0.000042,
      entries: 2500,
    });
    expect(await wallets.balance('acme')).toBe(expected);
  });

  it('rebuilds a corrupted balance from a trimmed ledger longer than one read chunk', async () => {
    const bounded = createRedisStores(raw, { prefix, ledgerMaxEntries: 1500 });
    const writes = Array.from({ length: 2500 }, (_, i) =>
      bounded.wallets.credit('trim', 'topup', { amountUsd: (i % 7) + 0.000001 }),
    );
    await Promise.all(writes);
    const expected = await bounded.wallets.balance('trim');
    const keys = new KeySpace(prefix);
    expect(await raw.xlen(keys.ledger('trim'))).toBe(1500);
    expect(await raw.hget(keys.wallet('trim'), 'trimmedCount')).toBe('1000');
    await raw.hset(keys.wallet('trim'), 'balance', '42');
    expect(await bounded.wallets.rebuildBalance('trim')).toEqual({
      balanceUsd: expected,
      previousUsd: 0.000042,
      entries: 1500,
    });
  });

  it('shrinks a ledger grown before its bound by at most 100 entries an append', async () => {
    const keys = new KeySpace(prefix);
    for (let i = 0; i < 250; i++) await stores.wallets.credit('grown', 'topup', { amountUsd: 1 });
    const bounded = createRedisStores(raw, { prefix, ledgerMaxEntries: 10 });
    const lengths: number[] = [];
    for (let i = 0; i < 3; i++) {
      await bounded.wallets.credit('grown', 'topup', { amountUsd: 1 });
      lengths.push(await raw.xlen(keys.ledger('grown')));
    }
    expect(lengths).toEqual([151, 52, 10]);
    expect(await bounded.wallets.rebuildBalance('grown')).toEqual({
      balanceUsd: 253,
      previousUsd: 253,
      entries: 10,
    });
  });

  it('refuses to finish a rebuild when entries it never read were trimmed meanwhile', async () => {
    const bounded = createRedisStores(raw, { prefix, ledgerMaxEntries: 3 });
    const keys = new KeySpace(prefix);
    for (let i = 0; i < 3; i++) await bounded.wallets.credit('race', 'topup', { amountUsd: 1 });
    // A rebuild read these 3 entries (none trimmed yet, sum 3), then 4 more arrived and one it never read went.
    const last = (await raw.xrange(keys.ledger('race'), '-', '+')).at(-1)?.[0] ?? '';
    for (let i = 0; i < 4; i++) await bounded.wallets.credit('race', 'topup', { amountUsd: 1 });
    const tail = (args: (string | number)[]) =>
      raw.eval(walletRebuildTail.lua, 2, keys.wallet('race'), keys.ledger('race'), ...args);
    expect(await tail([last, 3_000_000, 3])).toEqual([0]);
    expect(await raw.hget(keys.wallet('race'), 'balance')).toBe('7000000');
    // Read again from the start, the same script agrees and writes the balance.
    expect(await bounded.wallets.rebuildBalance('race')).toEqual({
      balanceUsd: 7,
      previousUsd: 7,
      entries: 3,
    });
  });

  it('stores amounts as integer micro-dollars', async () => {
    await stores.wallets.credit('globex', 'topup', { amountUsd: 0.1 + 0.2 });
    expect(await raw.hget(new KeySpace(prefix).wallet('globex'), 'balance')).toBe('300000');
    const [[, fields] = ['', []]] = await raw.xrange(new KeySpace(prefix).ledger('globex'), '-', '+');
    expect(fields).toContain('300000');
  });

  it('leaves a caller-owned client open on close()', async () => {
    await stores.close();
    expect(await raw.ping()).toBe('PONG');
  });
});
