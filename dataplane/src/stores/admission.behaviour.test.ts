/**
 * Rate limit and budget in one step, against the in-process stores and a real redis-server
 * (where it is one script): the outcomes the two separate calls had, in every case.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { BudgetLimit, ReserveRequest } from './budget.ts';
import type { Stores } from './index.ts';
import { backends, fakeClock, type FakeClock, type StoreFixture } from './testing/backends.ts';

const key = { tenant: 'acme', keyId: 'ci' };
const monthly: BudgetLimit = { limitUsd: 10, period: 'monthly' };
const reserve = (estimateUsd: number, extra: Partial<ReserveRequest> = {}): ReserveRequest => ({
  ...key,
  budget: monthly,
  estimateUsd,
  ...extra,
});

describe.each(backends)('admission: rate limit and budget together ($name)', (backend) => {
  let fixture: StoreFixture | undefined;
  let clock: FakeClock;

  async function open(): Promise<Stores> {
    clock = fakeClock();
    fixture = await backend.create({ clock: clock.now });
    return fixture.open();
  }

  afterEach(async () => {
    await fixture?.close();
    fixture = undefined;
  });

  it('counts the request and holds the estimate when both have room', async () => {
    const s = await open();
    const limits = { requestsPerMinute: 5, tokensPerMinute: 1000 };
    const { decision, reserve: r } = await s.admitter.admit(key, limits, 300, reserve(2.5));
    expect(decision).toMatchObject({ allowed: true, retryAfterMs: 0 });
    expect(decision.requests).toMatchObject({ limit: 5, remaining: 4 });
    expect(decision.tokens).toMatchObject({ limit: 1000, remaining: 700 });
    expect(decision.ticket).toMatchObject({ ...key, tokens: 300 });
    expect(r).toMatchObject({ ok: true, remainingUsd: 7.5 });
    expect(r?.ok && r.reservation).toMatchObject({ ...key, amountUsd: 2.5, periodKey: 'm2025-03' });
    expect(await s.budgets.state(key, monthly)).toMatchObject({ heldUsd: 2.5 });
    // The window holds the request and its tokens: the next acquire sees them.
    const next = await s.rateLimiter.acquire(key, limits, 0);
    expect(next.requests?.remaining).toBe(3);
    expect(next.tokens?.remaining).toBe(700);
  });

  it('leaves the budget untouched when the rate limit refuses', async () => {
    const s = await open();
    const limits = { requestsPerMinute: 1 };
    expect((await s.admitter.admit(key, limits, 0, reserve(1))).reserve?.ok).toBe(true);
    const refused = await s.admitter.admit(key, limits, 0, reserve(1));
    expect(refused.decision).toMatchObject({ allowed: false, ticket: undefined });
    expect(refused.decision.retryAfterMs).toBe(60_000);
    expect(refused.reserve).toBeUndefined();
    expect(await s.budgets.state(key, monthly)).toMatchObject({ heldUsd: 1 });
  });

  it('gives the tokens back (the request stays counted) when the budget refuses', async () => {
    const s = await open();
    const limits = { requestsPerMinute: 5, tokensPerMinute: 1000 };
    const refused = await s.admitter.admit(key, limits, 400, reserve(11));
    expect(refused.decision.allowed).toBe(true);
    expect(refused.reserve).toEqual({ ok: false, remainingUsd: 10, rechargedUsd: 0 });
    expect(await s.budgets.state(key, monthly)).toMatchObject({ heldUsd: 0 });
    const next = await s.rateLimiter.acquire(key, limits, 0);
    expect(next.requests?.remaining).toBe(3);
    expect(next.tokens?.remaining).toBe(1000);
  });

  it('recharges from the wallet in the same step', async () => {
    const s = await open();
    await s.wallets.credit('acme', 'topup', { amountUsd: 100 });
    const small: BudgetLimit = { limitUsd: 2, period: 'daily' };
    const recharge = { thresholdUsd: 1, amountUsd: 5, monthlyCapUsd: 12 };
    const r = await s.admitter.admit(
      key,
      { requestsPerMinute: 5 },
      0,
      reserve(1.5, { budget: small, autoRecharge: recharge, reference: 'req-1' }),
    );
    expect(r.reserve).toMatchObject({ ok: true, rechargedUsd: 5, remainingUsd: 5.5 });
    expect(await s.wallets.balance('acme')).toBe(95);
    expect((await s.wallets.ledger('acme')).at(-1)).toMatchObject({ kind: 'recharge', reference: 'req-1' });
  });

  it('moves nothing from the wallet when the budget refuses even after a recharge', async () => {
    const s = await open();
    await s.wallets.credit('acme', 'topup', { amountUsd: 100 });
    const small: BudgetLimit = { limitUsd: 2, period: 'daily' };
    const recharge = { thresholdUsd: 1, amountUsd: 5, monthlyCapUsd: 12 };
    const r = await s.admitter.admit(
      key,
      { requestsPerMinute: 5 },
      0,
      reserve(20, { budget: small, autoRecharge: recharge, reference: 'req-big' }),
    );
    expect(r.reserve).toEqual({ ok: false, remainingUsd: 2, rechargedUsd: 0 });
    expect(await s.wallets.balance('acme')).toBe(100);
    expect((await s.wallets.ledger('acme')).map((e) => e.kind)).toEqual(['topup']);
    expect(await s.budgets.state(key, small)).toMatchObject({ creditUsd: 0, rechargedThisMonthUsd: 0 });
  });

  it('with no limit set, only reserves (nothing is counted)', async () => {
    const s = await open();
    const r = await s.admitter.admit(key, {}, 500, reserve(1));
    expect(r.decision).toMatchObject({
      allowed: true,
      requests: undefined,
      tokens: undefined,
      ticket: undefined,
    });
    expect(r.reserve?.ok).toBe(true);
  });

  it('agrees with the separate calls across a run of admissions and refusals', async () => {
    const s = await open();
    const limits = { requestsPerMinute: 4, tokensPerMinute: 900 };
    const outcomes: string[] = [];
    for (let i = 0; i < 8; i++) {
      const { decision, reserve: r } = await s.admitter.admit(key, limits, 200, reserve(3));
      outcomes.push(
        `${decision.allowed ? 'in' : 'limited'}/${r === undefined ? '-' : r.ok ? 'held' : 'broke'}`,
      );
      clock.advance(1000);
    }
    // 10 $ hold three 3 $ estimates; the fourth request is admitted by the limit (its 200
    // tokens given back), then the request limit (4 per minute) refuses the rest.
    expect(outcomes).toEqual([
      'in/held',
      'in/held',
      'in/held',
      'in/broke',
      'limited/-',
      'limited/-',
      'limited/-',
      'limited/-',
    ]);
    const next = await s.rateLimiter.acquire(key, { tokensPerMinute: 900 }, 0);
    expect(next.tokens?.remaining).toBe(300);
  });
});
