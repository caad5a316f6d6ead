/** Redis-only behaviour: key layout, rebuilding a corrupted balance, long ledgers. */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testRedisUrl } from '../../../../test/harness/redis.ts';
import { newId } from '../ids.ts';
import { createRedisStores, type Stores } from '../index.ts';
import { KeySpace } from './keys.ts';

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
