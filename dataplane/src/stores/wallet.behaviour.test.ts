/** One behavioural suite, run against the in-process and the Redis wallet store. */
import { afterEach, describe, expect, it } from 'vitest';
import type { Stores } from './index.ts';
import { toMicros } from './money.ts';
import type { StoresOptions } from './index.ts';
import { backends, fakeClock, type FakeClock, type StoreFixture } from './testing/backends.ts';
import type { LedgerEntry } from './wallet.ts';

const sumMicros = (entries: LedgerEntry[]) => entries.reduce((s, e) => s + toMicros(e.amountUsd), 0);

describe.each(backends)('wallet ($name)', (backend) => {
  let fixture: StoreFixture | undefined;
  let clock: FakeClock;

  async function open(opts: StoresOptions = {}): Promise<Stores> {
    clock = fakeClock(Date.parse('2025-03-14T12:00:00Z'));
    fixture = await backend.create({ ...opts, clock: clock.now });
    return fixture.open();
  }

  afterEach(async () => {
    await fixture?.close();
    fixture = undefined;
  });

  it('starts empty', async () => {
    const { wallets } = await open();
    expect(await wallets.balance('acme')).toBe(0);
    expect(await wallets.ledger('acme')).toEqual([]);
    expect(await wallets.rebuildBalance('acme')).toEqual({ balanceUsd: 0, previousUsd: 0, entries: 0 });
  });

  it('books every movement as a ledger entry with the balance after it', async () => {
    const { wallets } = await open();
    const top = await wallets.credit('acme', 'topup', { amountUsd: 100, reference: 'invoice-1' });
    expect(top).toMatchObject({
      ok: true,
      duplicate: false,
      entry: {
        kind: 'topup',
        amountUsd: 100,
        balanceUsd: 100,
        at: clock.now(),
        reference: 'invoice-1',
        keyId: undefined,
      },
    });
    clock.advance(1000);
    await wallets.credit('acme', 'cache_credit', { amountUsd: 0.000123, keyId: 'ci', reference: 'req-7' });
    clock.advance(1000);
    const debit = await wallets.debit('acme', 'debit', { amountUsd: 30.5, keyId: 'ci' });
    expect(debit).toMatchObject({
      ok: true,
      entry: { kind: 'debit', amountUsd: -30.5, balanceUsd: 69.500123 },
    });
    await wallets.debit('acme', 'adjustment', { amountUsd: 0.5 });
    expect(await wallets.balance('acme')).toBe(69.000123);
    const ledger = await wallets.ledger('acme');
    expect(ledger.map((e) => [e.kind, e.amountUsd, e.balanceUsd])).toEqual([
      ['topup', 100, 100],
      ['cache_credit', 0.000123, 100.000123],
      ['debit', -30.5, 69.500123],
      ['adjustment', -0.5, 69.000123],
    ]);
    expect(ledger[1]).toMatchObject({ keyId: 'ci', reference: 'req-7', at: clock.now() - 1000 });
    const ids = ledger.map((e) => e.id);
    expect([...ids].sort((a, b) => (a < b ? -1 : 1))).toEqual(ids);
    expect(new Set(ids).size).toBe(4);
  });

  it('refuses a debit that would overdraw, unless told to allow it', async () => {
    const { wallets } = await open();
    await wallets.credit('acme', 'topup', { amountUsd: 10 });
    expect(await wallets.debit('acme', 'debit', { amountUsd: 10.000001 })).toEqual({
      ok: false,
      balanceUsd: 10,
    });
    expect((await wallets.ledger('acme')).length).toBe(1);
    expect(await wallets.debit('acme', 'debit', { amountUsd: 12, allowNegative: true })).toMatchObject({
      ok: true,
      entry: { balanceUsd: -2 },
    });
    expect(await wallets.debit('acme', 'debit', { amountUsd: 0.01 })).toEqual({ ok: false, balanceUsd: -2 });
  });

  it('applies a movement with an idempotency key once and returns the original entry after', async () => {
    const { wallets } = await open();
    const first = await wallets.credit('acme', 'cache_credit', {
      amountUsd: 1.25,
      idempotencyKey: 'req-1',
      keyId: 'ci',
    });
    clock.advance(500);
    const again = await wallets.credit('acme', 'cache_credit', {
      amountUsd: 1.25,
      idempotencyKey: 'req-1',
      keyId: 'ci',
    });
    expect(first.ok && again.ok).toBe(true);
    if (!first.ok || !again.ok) return;
    expect(again.duplicate).toBe(true);
    expect(again.entry).toEqual(first.entry);
    expect(await wallets.balance('acme')).toBe(1.25);
    await wallets.credit('acme', 'cache_credit', { amountUsd: 1.25, idempotencyKey: 'req-2' });
    expect(await wallets.balance('acme')).toBe(2.5);
  });

  it('aligns with the configured funding idempotently', async () => {
    const { wallets } = await open();
    expect(await wallets.syncConfigured('acme', 100)).toMatchObject({
      kind: 'topup',
      amountUsd: 100,
      balanceUsd: 100,
    });
    expect(await wallets.syncConfigured('acme', 100)).toBeUndefined();
    await wallets.debit('acme', 'debit', { amountUsd: 40 });
    expect(await wallets.syncConfigured('acme', 150)).toMatchObject({
      kind: 'topup',
      amountUsd: 50,
      balanceUsd: 110,
    });
    expect(await wallets.syncConfigured('acme', 120)).toMatchObject({
      kind: 'adjustment',
      amountUsd: -30,
      balanceUsd: 80,
      reference: 'config',
    });
    expect(await wallets.syncConfigured('globex', 0)).toBeUndefined();
    expect(await wallets.balance('acme')).toBe(80);
  });

  it('pages through the ledger', async () => {
    const { wallets } = await open();
    for (let i = 1; i <= 5; i++) await wallets.credit('acme', 'topup', { amountUsd: i });
    const firstTwo = await wallets.ledger('acme', { limit: 2 });
    expect(firstTwo.map((e) => e.amountUsd)).toEqual([1, 2]);
    const rest = await wallets.ledger('acme', { after: firstTwo[1]!.id });
    expect(rest.map((e) => e.amountUsd)).toEqual([3, 4, 5]);
    expect(await wallets.ledger('acme', { after: rest[2]!.id })).toEqual([]);
  });

  it('keeps tenants apart', async () => {
    const { wallets } = await open();
    await wallets.credit('acme', 'topup', { amountUsd: 5 });
    expect(await wallets.balance('globex')).toBe(0);
    expect(await wallets.ledger('globex')).toEqual([]);
  });

  it('concurrent movements from 3 clients: balance equals the ledger sum and a rebuild agrees', async () => {
    const { wallets } = await open();
    const handles = await Promise.all([fixture!.open(), fixture!.open(), fixture!.open()]);
    await wallets.credit('acme', 'topup', { amountUsd: 50 });
    const results = await Promise.all(
      Array.from({ length: 300 }, (_, i) => {
        const w = handles[i % 3]!.wallets;
        const amountUsd = ((i * 7919) % 1000) / 1000 + 0.000001;
        return i % 3 === 0
          ? w.credit('acme', 'cache_credit', { amountUsd })
          : w.debit('acme', 'debit', { amountUsd, idempotencyKey: `d-${i % 150}` });
      }),
    );
    expect(results.every((r) => !r.ok || r.entry!.balanceUsd >= 0)).toBe(true);
    const ledger = await wallets.ledger('acme');
    const balance = toMicros(await wallets.balance('acme'));
    expect(balance).toBeGreaterThanOrEqual(0);
    expect(sumMicros(ledger)).toBe(balance);
    // Balances after each entry chain: each is the previous plus the amount.
    ledger.reduce((prev, e) => {
      expect(toMicros(e.balanceUsd)).toBe(prev + toMicros(e.amountUsd));
      return toMicros(e.balanceUsd);
    }, 0);
    expect(await handles[1]!.wallets.rebuildBalance('acme')).toEqual({
      balanceUsd: balance / 1e6,
      previousUsd: balance / 1e6,
      entries: ledger.length,
    });
  });
  describe('ledger retention (the newest ledgerMaxEntries entries are kept; below 20, exactly)', () => {
    it('keeps the newest entries, and the balance and a rebuild still count the trimmed ones', async () => {
      const { wallets } = await open({ ledgerMaxEntries: 5 });
      for (let i = 1; i <= 12; i++) await wallets.credit('acme', 'topup', { amountUsd: i });
      const ledger = await wallets.ledger('acme');
      expect(ledger.map((e) => [e.amountUsd, e.balanceUsd])).toEqual([
        [8, 36],
        [9, 45],
        [10, 55],
        [11, 66],
        [12, 78],
      ]);
      expect(await wallets.balance('acme')).toBe(78);
      expect(await wallets.rebuildBalance('acme')).toEqual({ balanceUsd: 78, previousUsd: 78, entries: 5 });
      await wallets.debit('acme', 'debit', { amountUsd: 0.5 });
      expect(await wallets.balance('acme')).toBe(77.5);
      expect((await wallets.ledger('acme')).map((e) => e.amountUsd)).toEqual([9, 10, 11, 12, -0.5]);
      expect(await wallets.rebuildBalance('acme')).toEqual({
        balanceUsd: 77.5,
        previousUsd: 77.5,
        entries: 5,
      });
      // Paging from an id that was trimmed starts at the oldest entry kept.
      expect(
        (await wallets.ledger('acme', { after: ledger[0]!.id, limit: 2 })).map((e) => e.amountUsd),
      ).toEqual([9, 10]);
    });

    it('trims after recharges and configured funding too', async () => {
      const { wallets, budgets } = await open({ ledgerMaxEntries: 3 });
      await wallets.syncConfigured('acme', 100);
      const policy = { thresholdUsd: 1, amountUsd: 2, monthlyCapUsd: 50 };
      for (let i = 0; i < 4; i++) {
        const r = await budgets.reserve({
          tenant: 'acme',
          keyId: 'ci',
          budget: { limitUsd: 1, period: 'daily' },
          estimateUsd: 2,
          autoRecharge: policy,
        });
        expect(r).toMatchObject({ ok: true, rechargedUsd: 2 });
      }
      expect(await wallets.syncConfigured('acme', 90)).toMatchObject({ amountUsd: -10, balanceUsd: 82 });
      const ledger = await wallets.ledger('acme');
      expect(ledger.map((e) => [e.kind, e.amountUsd])).toEqual([
        ['recharge', -2],
        ['recharge', -2],
        ['adjustment', -10],
      ]);
      expect(await wallets.rebuildBalance('acme')).toEqual({ balanceUsd: 82, previousUsd: 82, entries: 3 });
    });

    it('never applies a repeated movement again, even once its entry was trimmed', async () => {
      const { wallets } = await open({ ledgerMaxEntries: 2 });
      const m = { amountUsd: 1.5, idempotencyKey: 'req-1', keyId: 'ci' };
      expect(await wallets.credit('acme', 'cache_credit', m)).toMatchObject({ ok: true, duplicate: false });
      expect(await wallets.credit('acme', 'cache_credit', m)).toMatchObject({
        ok: true,
        duplicate: true,
        entry: { amountUsd: 1.5 },
      });
      await wallets.credit('acme', 'topup', { amountUsd: 1 });
      await wallets.credit('acme', 'topup', { amountUsd: 1 });
      expect(await wallets.credit('acme', 'cache_credit', m)).toEqual({
        ok: true,
        duplicate: true,
        entry: undefined,
      });
      expect(await wallets.balance('acme')).toBe(3.5);
    });

    it('rebuilds exactly while 3 clients keep moving money and trimming', async () => {
      const { wallets } = await open({ ledgerMaxEntries: 40 });
      const handles = await Promise.all([fixture!.open(), fixture!.open(), fixture!.open()]);
      await wallets.credit('acme', 'topup', { amountUsd: 50 });
      const moves = Promise.all(
        Array.from({ length: 300 }, (_, i) =>
          handles[i % 3]!.wallets.credit('acme', 'cache_credit', {
            amountUsd: ((i * 7919) % 1000) / 1000 + 0.000001,
          }),
        ),
      );
      const rebuilds = Promise.all(Array.from({ length: 10 }, () => wallets.rebuildBalance('acme')));
      const [applied, rebuilt] = await Promise.all([moves, rebuilds]);
      // Each rebuild wrote the balance it found: nothing was lost or counted twice.
      for (const r of rebuilt) expect(r.balanceUsd).toBe(r.previousUsd);
      const expected = applied.reduce((s, r) => s + (r.ok ? toMicros(r.entry!.amountUsd) : 0), toMicros(50));
      expect(toMicros(await wallets.balance('acme'))).toBe(expected);
      // 301 entries, bounded at 40 and trimmed back to it whenever 4 over: 40 + 261 % 4 kept.
      expect(await wallets.ledger('acme')).toHaveLength(41);
      expect(await wallets.rebuildBalance('acme')).toEqual({
        balanceUsd: expected / 1e6,
        previousUsd: expected / 1e6,
        entries: 41,
      });
    });
  });
});
