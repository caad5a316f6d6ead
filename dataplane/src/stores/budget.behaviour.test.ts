/** One behavioural suite, run against the in-process and the Redis budget store (with wallets). */
import { afterEach, describe, expect, it } from 'vitest';
import { WORK_HOLDS_SUMMED, type BudgetLimit, type Reservation, type ReserveResult } from './budget.ts';
import type { Stores } from './index.ts';
import { MAX_CHARGE_USD, toMicros } from './money.ts';
import { backends, fakeClock, type FakeClock, type StoreFixture } from './testing/backends.ts';

const key = { tenant: 'acme', keyId: 'ci' };
const monthly: BudgetLimit = { limitUsd: 10, period: 'monthly' };
const TTL = 60_000;

function reserved(r: ReserveResult): Reservation {
  if (!r.ok) throw new Error(`expected a reservation, got ${JSON.stringify(r)}`);
  return r.reservation;
}

describe.each(backends)('budget ($name)', (backend) => {
  let fixture: StoreFixture | undefined;
  let clock: FakeClock;

  async function open(): Promise<Stores> {
    clock = fakeClock(Date.parse('2025-03-14T12:00:00Z'));
    fixture = await backend.create({ clock: clock.now, reservationTtlMs: TTL });
    return fixture.open();
  }

  afterEach(async () => {
    await fixture?.close();
    fixture = undefined;
  });

  it('reserves within the limit and reports what is left', async () => {
    const { budgets } = await open();
    const r = await budgets.reserve({ ...key, budget: monthly, estimateUsd: 2.5 });
    expect(r).toMatchObject({ ok: true, remainingUsd: 7.5, rechargedUsd: 0 });
    expect(reserved(r)).toMatchObject({ ...key, periodKey: 'm2025-03', amountUsd: 2.5, limitUsd: 10 });
    expect(await budgets.state(key, monthly)).toEqual({
      periodKey: 'm2025-03',
      limitUsd: 10,
      spentUsd: 0,
      creditUsd: 0,
      heldUsd: 2.5,
      remainingUsd: 7.5,
      rechargedThisMonthUsd: 0,
    });
  });

  it('refuses an estimate that does not fit and says how much is left', async () => {
    const { budgets } = await open();
    reserved(await budgets.reserve({ ...key, budget: monthly, estimateUsd: 9 }));
    const refused = await budgets.reserve({ ...key, budget: monthly, estimateUsd: 1.000001 });
    expect(refused).toEqual({ ok: false, remainingUsd: 1, rechargedUsd: 0 });
    expect((await budgets.reserve({ ...key, budget: monthly, estimateUsd: 1 })).ok).toBe(true);
    expect((await budgets.reserve({ ...key, budget: monthly, estimateUsd: 0 })).ok).toBe(false);
  });

  it('holds a large estimate as its exact micro-dollars: float noise is not rounded up', async () => {
    const { budgets } = await open();
    const budget: BudgetLimit = { limitUsd: 11_024.88, period: 'monthly' };
    // The same amount reached as a sum is 11024.880000000001: a fixed noise allowance held
    // one micro-dollar more than the budget and refused it.
    const r = reserved(await budgets.reserve({ ...key, budget, estimateUsd: 10_000 + 1024.88 }));
    expect(toMicros(r.amountUsd)).toBe(11_024_880_000);
    expect((await budgets.state(key, budget)).remainingUsd).toBe(0);
  });

  it('rounds estimates up to the micro-dollar', async () => {
    const { budgets } = await open();
    const r = reserved(await budgets.reserve({ ...key, budget: monthly, estimateUsd: 0.0000001 }));
    expect(r.amountUsd).toBe(0.000001);
  });

  it('settles the actual cost, frees the hold and charges once however often it is repeated', async () => {
    const { budgets } = await open();
    const r = reserved(await budgets.reserve({ ...key, budget: monthly, estimateUsd: 3 }));
    expect(await budgets.settle(r, 1.234567)).toEqual({
      applied: true,
      chargedUsd: 1.234567,
      remainingUsd: 8.765433,
    });
    expect(await budgets.settle(r, 1.234567)).toEqual({
      applied: false,
      chargedUsd: 0,
      remainingUsd: 8.765433,
    });
    expect(await budgets.settle(r, 5)).toMatchObject({ applied: false, chargedUsd: 0 });
    expect(await budgets.state(key, monthly)).toMatchObject({ spentUsd: 1.234567, heldUsd: 0 });
  });

  it('settles above the estimate (the overshoot is charged)', async () => {
    const { budgets } = await open();
    const r = reserved(await budgets.reserve({ ...key, budget: monthly, estimateUsd: 1 }));
    await budgets.settle(r, 12);
    expect(await budgets.state(key, monthly)).toMatchObject({ spentUsd: 12, remainingUsd: 0 });
    expect((await budgets.reserve({ ...key, budget: monthly, estimateUsd: 0.01 })).ok).toBe(false);
  });

  it.each([1e300, Infinity, Number.NaN])(
    'books an amount past the ceiling (%d) at the ceiling: never a throw that loses the charge',
    async (amount) => {
      const { budgets } = await open();
      const r = reserved(await budgets.reserve({ ...key, budget: monthly, estimateUsd: 1 }));
      await budgets.settle(r, amount);
      await budgets.charge({ ...key, budget: monthly, amountUsd: amount, id: 'direct' });
      expect((await budgets.state(key, monthly)).spentUsd).toBe(2 * MAX_CHARGE_USD);
    },
  );

  it('release drops the hold without charging, and a later settle is ignored', async () => {
    const { budgets } = await open();
    const r = reserved(await budgets.reserve({ ...key, budget: monthly, estimateUsd: 4 }));
    expect(await budgets.release(r)).toEqual({ applied: true, chargedUsd: 0, remainingUsd: 10 });
    expect(await budgets.settle(r, 4)).toMatchObject({ applied: false, chargedUsd: 0 });
    expect(await budgets.state(key, monthly)).toMatchObject({ spentUsd: 0, heldUsd: 0, remainingUsd: 10 });
  });

  it('expires abandoned reservations, and still charges a late settle exactly once', async () => {
    const { budgets } = await open();
    const r = reserved(await budgets.reserve({ ...key, budget: monthly, estimateUsd: 8 }));
    expect((await budgets.reserve({ ...key, budget: monthly, estimateUsd: 8 })).ok).toBe(false);
    clock.advance(TTL - 1);
    expect((await budgets.reserve({ ...key, budget: monthly, estimateUsd: 8 })).ok).toBe(false);
    clock.advance(1);
    expect(await budgets.state(key, monthly)).toMatchObject({ heldUsd: 0, remainingUsd: 10 });
    const second = reserved(await budgets.reserve({ ...key, budget: monthly, estimateUsd: 8 }));
    expect(await budgets.settle(r, 3)).toMatchObject({ applied: true, chargedUsd: 3 });
    expect(await budgets.settle(r, 3)).toMatchObject({ applied: false });
    expect(await budgets.state(key, monthly)).toMatchObject({ spentUsd: 3, heldUsd: 8, remainingUsd: -1 });
    await budgets.settle(second, 0.5);
    expect(await budgets.state(key, monthly)).toMatchObject({ spentUsd: 3.5, heldUsd: 0, remainingUsd: 6.5 });
  });

  it('starts each UTC day afresh and charges a request to the period it was reserved in', async () => {
    const { budgets } = await open();
    const daily: BudgetLimit = { limitUsd: 1, period: 'daily' };
    clock.set(Date.parse('2025-03-14T23:59:59Z'));
    const r = reserved(await budgets.reserve({ ...key, budget: daily, estimateUsd: 0.6 }));
    clock.advance(2000);
    // A hold in flight counts against the new day too (conservative), until it is settled.
    expect(await budgets.reserve({ ...key, budget: daily, estimateUsd: 0.5 })).toMatchObject({
      ok: false,
      remainingUsd: 0.4,
    });
    const next = reserved(await budgets.reserve({ ...key, budget: daily, estimateUsd: 0.4 }));
    expect(next.periodKey).toBe('d2025-03-15');
    await budgets.settle(r, 0.6);
    await budgets.settle(next, 0.7);
    expect(await budgets.state(key, daily)).toMatchObject({
      periodKey: 'd2025-03-15',
      spentUsd: 0.7,
      remainingUsd: 0.3,
    });
    clock.set(Date.parse('2025-03-14T12:00:00Z'));
    expect(await budgets.state(key, daily)).toMatchObject({ periodKey: 'd2025-03-14', spentUsd: 0.6 });
  });

  it('never resets a total budget', async () => {
    const { budgets } = await open();
    const total: BudgetLimit = { limitUsd: 1, period: 'total' };
    await budgets.settle(reserved(await budgets.reserve({ ...key, budget: total, estimateUsd: 1 })), 0.9);
    clock.advance(400 * 86_400_000);
    expect(await budgets.state(key, total)).toMatchObject({ periodKey: 'total', spentUsd: 0.9 });
  });

  it('charges without a reservation, idempotently when given an id', async () => {
    const { budgets } = await open();
    expect(await budgets.charge({ ...key, budget: monthly, amountUsd: 0.25, id: 'req-1' })).toMatchObject({
      applied: true,
      chargedUsd: 0.25,
    });
    expect(await budgets.charge({ ...key, budget: monthly, amountUsd: 0.25, id: 'req-1' })).toMatchObject({
      applied: false,
    });
    await budgets.charge({ ...key, budget: monthly, amountUsd: 0.25 });
    expect((await budgets.state(key, monthly)).spentUsd).toBe(0.5);
  });

  describe('retained holds (work charged long after its request)', () => {
    const LONG = 30 * 86_400_000;
    const JOB = 'job:1';

    it("move a request's reservation to a hold of their own that outlives the request's TTL", async () => {
      const { budgets } = await open();
      const r = reserved(await budgets.reserve({ ...key, budget: monthly, estimateUsd: 9 }));
      expect(await budgets.retain(r, JOB, LONG)).toBe(true);
      // Moved, not copied: the request's settle of its own id now frees nothing.
      expect(await budgets.state(key, monthly)).toMatchObject({ heldUsd: 9, remainingUsd: 1 });
      await budgets.settle(r, 0);
      clock.advance(TTL * 10);
      expect(await budgets.state(key, monthly)).toMatchObject({ heldUsd: 9, remainingUsd: 1 });
      // Every later reservation of the key fits beside it or not at all.
      expect((await budgets.reserve({ ...key, budget: monthly, estimateUsd: 1.000001 })).ok).toBe(false);
      expect(reserved(await budgets.reserve({ ...key, budget: monthly, estimateUsd: 1 })).amountUsd).toBe(1);
      // Repeating the retain (a lost reply retried) holds it once.
      expect(await budgets.retain(r, JOB, LONG)).toBe(true);
      expect((await budgets.state(key, monthly)).heldUsd).toBe(10);
    });

    it('are replaced by their charge in one step, once, however often (and however late) it is repeated', async () => {
      const { budgets } = await open();
      // A total budget: the charge is still in its period a month later.
      const total: BudgetLimit = { limitUsd: 10, period: 'total' };
      await budgets.retain(
        reserved(await budgets.reserve({ ...key, budget: total, estimateUsd: 9 })),
        JOB,
        LONG,
      );
      const charge = { ...key, budget: total, amountUsd: 2, id: JOB, rememberMs: LONG };
      expect(await budgets.charge(charge)).toMatchObject({ applied: true, chargedUsd: 2, remainingUsd: 8 });
      clock.advance(LONG - 1);
      expect(await budgets.charge(charge)).toMatchObject({ applied: false });
      expect(await budgets.state(key, total)).toMatchObject({ spentUsd: 2, heldUsd: 0, remainingUsd: 8 });
    });

    it('are released by a charge of nothing, and a retain after the settlement holds nothing', async () => {
      const { budgets } = await open();
      const r = reserved(await budgets.reserve({ ...key, budget: monthly, estimateUsd: 9 }));
      await budgets.charge({ ...key, budget: monthly, amountUsd: 0, id: JOB, rememberMs: LONG });
      expect(await budgets.retain(r, JOB, LONG)).toBe(false);
      expect(await budgets.state(key, monthly)).toMatchObject({ spentUsd: 0, heldUsd: 0, remainingUsd: 10 });
    });

    it('lapse after their own TTL when no settlement ever comes', async () => {
      const { budgets } = await open();
      await budgets.retain(
        reserved(await budgets.reserve({ ...key, budget: monthly, estimateUsd: 9 })),
        JOB,
        LONG,
      );
      clock.advance(LONG - 1);
      expect((await budgets.state(key, monthly)).heldUsd).toBe(9);
      clock.advance(1);
      expect((await budgets.reserve({ ...key, budget: monthly, estimateUsd: 10 })).ok).toBe(true);
    });

    it('hold the work even when the reservation lapsed before the work was retained', async () => {
      const { budgets } = await open();
      const r = reserved(await budgets.reserve({ ...key, budget: monthly, estimateUsd: 4 }));
      clock.advance(TTL);
      expect(await budgets.retain(r, JOB, LONG)).toBe(true);
      expect(await budgets.state(key, monthly)).toMatchObject({ heldUsd: 4, remainingUsd: 6 });
    });

    it('are what heldForWork reports, apart from requests in flight, until they settle', async () => {
      const { budgets } = await open();
      expect(await budgets.heldForWork(key)).toEqual({ usd: 0, partial: false });
      await budgets.retain(
        reserved(await budgets.reserve({ ...key, budget: monthly, estimateUsd: 3 })),
        JOB,
        LONG,
      );
      await budgets.retain(
        reserved(await budgets.reserve({ ...key, budget: monthly, estimateUsd: 2.5 })),
        'job:2',
        LONG,
      );
      reserved(await budgets.reserve({ ...key, budget: monthly, estimateUsd: 4 }));
      expect(await budgets.heldForWork(key)).toEqual({ usd: 5.5, partial: false });
      expect(await budgets.heldForWork({ ...key, keyId: 'other' })).toEqual({ usd: 0, partial: false });
      await budgets.charge({ ...key, budget: monthly, amountUsd: 1, id: JOB, rememberMs: LONG });
      expect(await budgets.heldForWork(key)).toEqual({ usd: 2.5, partial: false });
    });

    it('are summed up to WORK_HOLDS_SUMMED, and a sum of more says it is partial', async () => {
      const { budgets } = await open();
      const big = { limitUsd: 1000, period: 'monthly' as const };
      const hold = async (i: number) =>
        budgets.retain(
          reserved(await budgets.reserve({ ...key, budget: big, estimateUsd: 0.01 })),
          `job:${i}`,
          LONG,
        );
      for (let i = 0; i < WORK_HOLDS_SUMMED; i += 100)
        await Promise.all(Array.from({ length: 100 }, (_, j) => hold(i + j)));
      // Exactly the bound: all of it, and complete.
      expect(await budgets.heldForWork(key)).toEqual({ usd: WORK_HOLDS_SUMMED * 0.01, partial: false });
      await hold(WORK_HOLDS_SUMMED);
      expect(await budgets.heldForWork(key)).toEqual({ usd: WORK_HOLDS_SUMMED * 0.01, partial: true });
    });

    it("leave a request reserved after them to lapse on the request's own TTL", async () => {
      const { budgets } = await open();
      await budgets.retain(
        reserved(await budgets.reserve({ ...key, budget: monthly, estimateUsd: 2 })),
        JOB,
        LONG,
      );
      // A scan once the request TTL has passed leaves the 30-day hold as the earliest expiry.
      clock.advance(TTL + 1);
      await budgets.release(
        reserved(await budgets.reserve({ ...key, budget: monthly, estimateUsd: 0.000001 })),
      );
      // A request's reservation that is never settled (its pod died) must still lapse after its TTL,
      // not wait for the hold's 30 days.
      reserved(await budgets.reserve({ ...key, budget: monthly, estimateUsd: 7 }));
      expect((await budgets.reserve({ ...key, budget: monthly, estimateUsd: 8 })).ok).toBe(false);
      clock.advance(TTL);
      expect((await budgets.reserve({ ...key, budget: monthly, estimateUsd: 8 })).ok).toBe(true);
    });
  });

  it('keeps keys and tenants apart', async () => {
    const { budgets } = await open();
    await budgets.settle(reserved(await budgets.reserve({ ...key, budget: monthly, estimateUsd: 10 })), 10);
    expect(
      (await budgets.reserve({ tenant: 'acme', keyId: 'other', budget: monthly, estimateUsd: 10 })).ok,
    ).toBe(true);
    expect(
      (await budgets.reserve({ tenant: 'globex', keyId: 'ci', budget: monthly, estimateUsd: 10 })).ok,
    ).toBe(true);
  });

  it('200 concurrent reserves from 3 clients hold exactly what the budget allows', async () => {
    await open();
    const handles = await Promise.all([fixture!.open(), fixture!.open(), fixture!.open()]);
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        handles[i % 3]!.budgets.reserve({ ...key, budget: monthly, estimateUsd: 0.1 }),
      ),
    );
    const ok = results.filter((r) => r.ok);
    expect(ok).toHaveLength(100);
    expect(await handles[0]!.budgets.state(key, monthly)).toMatchObject({ heldUsd: 10, remainingUsd: 0 });
    // Settling each at its estimate spends the budget to the micro-dollar, and settling again changes nothing.
    await Promise.all(ok.map((r, i) => handles[i % 3]!.budgets.settle(reserved(r), 0.1)));
    await Promise.all(ok.map((r, i) => handles[(i + 1) % 3]!.budgets.settle(reserved(r), 0.1)));
    expect(await handles[1]!.budgets.state(key, monthly)).toMatchObject({
      spentUsd: 10,
      heldUsd: 0,
      remainingUsd: 0,
    });
  });

  it('under concurrent reserve/settle traffic never overspends by more than the overshoot of estimates', async () => {
    await open();
    const handles = await Promise.all([fixture!.open(), fixture!.open(), fixture!.open()]);
    const budget: BudgetLimit = { limitUsd: 5, period: 'monthly' };
    let chargedMicros = 0;
    let overshootMicros = 0;
    // A deterministic spread of estimates and actuals (some above their estimate).
    const run = async (i: number) => {
      const h = handles[i % 3]!;
      const estimate = 0.01 + ((i * 37) % 50) / 1000;
      const r = await h.budgets.reserve({ ...key, budget, estimateUsd: estimate });
      if (!r.ok) return;
      const actual = (estimate * ((i * 53) % 150)) / 100;
      const s = await h.budgets.settle(r.reservation, actual);
      chargedMicros += toMicros(s.chargedUsd);
      overshootMicros += Math.max(0, toMicros(actual) - toMicros(r.reservation.amountUsd));
      await h.budgets.settle(r.reservation, actual); // duplicate: must not count
    };
    await Promise.all(Array.from({ length: 200 }, (_, i) => run(i)));
    const state = await handles[2]!.budgets.state(key, budget);
    expect(toMicros(state.spentUsd)).toBe(chargedMicros);
    expect(toMicros(state.spentUsd)).toBeLessThanOrEqual(toMicros(5) + overshootMicros);
    expect(state.heldUsd).toBe(0);
  });

  describe('auto-recharge', () => {
    const recharge = { thresholdUsd: 1, amountUsd: 5, monthlyCapUsd: 12 };
    const small: BudgetLimit = { limitUsd: 2, period: 'daily' };

    it('tops the key up from the wallet when a reservation would drop below the threshold', async () => {
      const { budgets, wallets } = await open();
      await wallets.credit('acme', 'topup', { amountUsd: 100 });
      const first = await budgets.reserve({
        ...key,
        budget: small,
        estimateUsd: 0.5,
        autoRecharge: recharge,
      });
      expect(first).toMatchObject({ ok: true, rechargedUsd: 0, remainingUsd: 1.5 });
      const second = await budgets.reserve({
        ...key,
        budget: small,
        estimateUsd: 1,
        autoRecharge: recharge,
        reference: 'req-2',
      });
      expect(second).toMatchObject({ ok: true, rechargedUsd: 5, remainingUsd: 5.5 });
      expect(await wallets.balance('acme')).toBe(95);
      const ledger = await wallets.ledger('acme');
      expect(ledger.at(-1)).toMatchObject({
        kind: 'recharge',
        amountUsd: -5,
        balanceUsd: 95,
        keyId: 'ci',
        reference: 'req-2',
      });
      expect(await budgets.state(key, small)).toMatchObject({
        creditUsd: 5,
        heldUsd: 1.5,
        rechargedThisMonthUsd: 5,
      });
    });

    it('recharged credit carries over into the next period and is spent after the allowance', async () => {
      const { budgets, wallets } = await open();
      await wallets.credit('acme', 'topup', { amountUsd: 100 });
      const r = reserved(
        await budgets.reserve({ ...key, budget: small, estimateUsd: 1.5, autoRecharge: recharge }),
      );
      expect(await budgets.state(key, small)).toMatchObject({ creditUsd: 5 });
      await budgets.settle(r, 3); // 2 from the allowance, 1 from the credit
      expect(await budgets.state(key, small)).toMatchObject({ spentUsd: 3, creditUsd: 4, remainingUsd: 4 });
      clock.advance(86_400_000);
      expect(await budgets.state(key, small)).toMatchObject({ spentUsd: 0, creditUsd: 4, remainingUsd: 6 });
    });

    it('stops at the monthly cap and when the wallet runs dry, and never overdraws the wallet', async () => {
      const { budgets, wallets } = await open();
      await wallets.credit('acme', 'topup', { amountUsd: 7 });
      const big = await budgets.reserve({ ...key, budget: small, estimateUsd: 7, autoRecharge: recharge });
      // Needs two recharges to end above the threshold, the wallet pays for one.
      expect(big).toMatchObject({ ok: true, rechargedUsd: 5, remainingUsd: 0 });
      expect(await wallets.balance('acme')).toBe(2);
      expect(
        (await budgets.reserve({ ...key, budget: small, estimateUsd: 1, autoRecharge: recharge })).ok,
      ).toBe(false);
      await wallets.credit('acme', 'topup', { amountUsd: 100 });
      // Cap 12: one more recharge of 5 (10 in total); a third would exceed it.
      expect(
        await budgets.reserve({ ...key, budget: small, estimateUsd: 1, autoRecharge: recharge }),
      ).toMatchObject({
        ok: true,
        rechargedUsd: 5,
      });
      const capped = await budgets.reserve({ ...key, budget: small, estimateUsd: 5, autoRecharge: recharge });
      expect(capped).toMatchObject({ ok: false, rechargedUsd: 0, remainingUsd: 4 });
      expect(await budgets.state(key, small)).toMatchObject({ rechargedThisMonthUsd: 10 });
      // A new month resets the cap (the holds have expired by then: 2 allowance + 10 credit left).
      clock.set(Date.parse('2025-04-01T00:00:00Z'));
      expect(
        await budgets.reserve({ ...key, budget: small, estimateUsd: 12, autoRecharge: recharge }),
      ).toMatchObject({
        ok: true,
        rechargedUsd: 5,
        remainingUsd: 5,
      });
      expect(await budgets.state(key, small)).toMatchObject({ rechargedThisMonthUsd: 5 });
    });

    it('moves nothing from the wallet when even the recharge would not make the hold fit', async () => {
      const { budgets, wallets } = await open();
      await wallets.credit('acme', 'topup', { amountUsd: 100 });
      // The cap allows two recharges (10): 2 + 10 is still short of 20.
      const refused = await budgets.reserve({
        ...key,
        budget: small,
        estimateUsd: 20,
        autoRecharge: recharge,
        reference: 'req-big',
      });
      expect(refused).toEqual({ ok: false, remainingUsd: 2, rechargedUsd: 0 });
      expect(await wallets.balance('acme')).toBe(100);
      expect((await wallets.ledger('acme')).map((e) => e.kind)).toEqual(['topup']);
      expect(await budgets.state(key, small)).toMatchObject({
        creditUsd: 0,
        heldUsd: 0,
        remainingUsd: 2,
        rechargedThisMonthUsd: 0,
      });
      // The cap is intact: a request the recharge does make fit still gets it.
      expect(
        await budgets.reserve({ ...key, budget: small, estimateUsd: 8, autoRecharge: recharge }),
      ).toMatchObject({ ok: true, rechargedUsd: 10, remainingUsd: 4 });
      expect(await wallets.balance('acme')).toBe(90);
    });

    it('moves nothing when the wallet alone is too small for the hold to fit', async () => {
      const { budgets, wallets } = await open();
      await wallets.credit('acme', 'topup', { amountUsd: 6 });
      // One recharge of 5 (all the wallet pays for) leaves 7 for an estimate of 9.
      const refused = await budgets.reserve({
        ...key,
        budget: small,
        estimateUsd: 9,
        autoRecharge: recharge,
      });
      expect(refused).toEqual({ ok: false, remainingUsd: 2, rechargedUsd: 0 });
      expect(await wallets.balance('acme')).toBe(6);
      expect(await wallets.ledger('acme')).toHaveLength(1);
      expect(await budgets.state(key, small)).toMatchObject({ creditUsd: 0, rechargedThisMonthUsd: 0 });
    });

    it('concurrent reserves from 3 clients never exceed the cap or overdraw the wallet, and the ledger adds up', async () => {
      const { wallets } = await open();
      const handles = await Promise.all([fixture!.open(), fixture!.open(), fixture!.open()]);
      await wallets.credit('acme', 'topup', { amountUsd: 18 });
      const policy = { thresholdUsd: 0.5, amountUsd: 1, monthlyCapUsd: 50 };
      const results = await Promise.all(
        Array.from({ length: 120 }, (_, i) =>
          handles[i % 3]!.budgets.reserve({ ...key, budget: small, estimateUsd: 0.25, autoRecharge: policy }),
        ),
      );
      const recharged = results.reduce((s, r) => s + toMicros(r.rechargedUsd), 0);
      // The wallet held 18: at most 18 recharges of 1, and 2 + 18 = 20 USD buys exactly 80 holds of 0.25.
      expect(recharged).toBe(toMicros(18));
      expect(results.filter((r) => r.ok)).toHaveLength(80);
      expect(await wallets.balance('acme')).toBe(0);
      const ledger = await wallets.ledger('acme');
      expect(ledger.filter((e) => e.kind === 'recharge').reduce((s, e) => s - toMicros(e.amountUsd), 0)).toBe(
        recharged,
      );
      expect(await wallets.rebuildBalance('acme')).toMatchObject({
        balanceUsd: 0,
        previousUsd: 0,
        entries: ledger.length,
      });
      expect(await handles[0]!.budgets.state(key, small)).toMatchObject({
        creditUsd: 18,
        rechargedThisMonthUsd: 18,
      });
    });
  });
});
