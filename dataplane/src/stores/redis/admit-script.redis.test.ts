/**
 * The one-step admission script (lua/admit.ts) against a real redis-server: it must leave
 * Redis exactly as the separate scripts did (rate acquire, budget reserve, and the give-back
 * of the tokens when the budget refuses), so pods running either version agree on every
 * window and hold; it must stay exact under concurrent admissions from several pods; and
 * window entries and holds must expire as before.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testRedisUrl } from '../../../../test/harness/redis.ts';
import { SequentialAdmitter, type Admitter } from '../admission.ts';
import type { BudgetLimit, ReserveRequest } from '../budget.ts';
import { newId } from '../ids.ts';
import { createRedisStores, type Stores } from '../index.ts';
import type { RateLimits } from '../rate-limiter.ts';
import { fakeClock, type FakeClock } from '../testing/backends.ts';

const key = { tenant: 'acme', keyId: 'ci' };
const monthly: BudgetLimit = { limitUsd: 10, period: 'monthly' };
const reserve = (estimateUsd: number, extra: Partial<ReserveRequest> = {}): ReserveRequest => ({
  ...key,
  budget: monthly,
  estimateUsd,
  reference: 'req',
  ...extra,
});

/**
 * Everything under `prefix`, with the random ids taken out: window entries as score and
 * weight, holds as amount and expiry, strings and hash fields as they are, and whether each
 * key expires within the window (a key that never expires would leak).
 */
async function snapshot(admin: Redis, prefix: string): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  const names = (await admin.keys(`${prefix}:*`)).sort();
  for (const name of names) {
    const short = name.slice(prefix.length);
    const ttl = await admin.pttl(name);
    const expiry = ttl < 0 ? 'never' : ttl <= 60_000 ? 'window' : 'long';
    const type = await admin.type(name);
    let value: unknown;
    if (type === 'string') value = await admin.get(name);
    else if (type === 'hash') {
      const h = await admin.hgetall(name);
      // The reservations hash is keyed by random ids: keep the amounts.
      value = short.endsWith(':res') ? Object.values(h).sort() : h;
    } else if (type === 'zset') {
      const flat = await admin.zrange(name, 0, -1, 'WITHSCORES');
      const entries: string[] = [];
      for (let i = 0; i < flat.length; i += 2) {
        const member = flat[i]!;
        const weight = member.includes(':') ? member.slice(member.lastIndexOf(':')) : '';
        entries.push(`${flat[i + 1]}${weight}`);
      }
      value = entries.sort();
    } else if (type === 'stream') {
      const entries = await admin.xrange(name, '-', '+');
      value = entries.map(([, fields]) => fields);
    } else value = type;
    out[short] = { expiry, value };
  }
  return out;
}

describe('admission script (lua/admit.ts) on a real redis-server', () => {
  const url = testRedisUrl();
  let admin: Redis;
  const opened: Stores[] = [];

  beforeAll(() => {
    admin = new Redis(url);
  });

  afterAll(async () => {
    await Promise.all(opened.map((s) => s.close()));
    admin.disconnect();
  });

  async function stores(prefix: string, clock: FakeClock): Promise<Stores> {
    const s = createRedisStores({ url }, { prefix, clock: clock.now });
    opened.push(s);
    await s.ready();
    return s;
  }

  /** One namespace admitted by the script, one by the separate scripts, on the same clock. */
  async function pair(): Promise<{
    clock: FakeClock;
    one: Stores;
    other: Stores;
    separate: Admitter;
    run(limits: RateLimits, tokens: number, req: ReserveRequest): Promise<void>;
    /** Both namespaces hold the same data, but for keys `skip` names. */
    same(skip?: (name: string) => boolean): Promise<void>;
  }> {
    const clock = fakeClock();
    const a = `adm1-${newId()}`;
    const b = `adm2-${newId()}`;
    const one = await stores(a, clock);
    const other = await stores(b, clock);
    const separate = new SequentialAdmitter(other.rateLimiter, other.budgets);
    const without = (snap: Record<string, unknown>, skip: (name: string) => boolean) =>
      Object.fromEntries(Object.entries(snap).filter(([name]) => !skip(name)));
    return {
      clock,
      one,
      other,
      separate,
      async run(limits, tokens, req) {
        const x = await one.admitter.admit(key, limits, tokens, req);
        const y = await separate.admit(key, limits, tokens, req);
        // Same answer (ids aside): the headers, 429s and 402s are built from these.
        const plain = (r: typeof x) => ({
          decision: { ...r.decision, ticket: r.decision.ticket && { ...r.decision.ticket, id: '' } },
          reserve: r.reserve && {
            ...r.reserve,
            ...(r.reserve.ok && { reservation: { ...r.reserve.reservation, id: '' } }),
          },
        });
        expect(plain(x)).toEqual(plain(y));
      },
      async same(skip = () => false) {
        const x = without(await snapshot(admin, a), skip);
        expect(Object.keys(x).length).toBeGreaterThan(0);
        expect(x).toEqual(without(await snapshot(admin, b), skip));
      },
    };
  }

  it('leaves Redis as the separate scripts did: admitted, refused by the budget, refused by the limit', async () => {
    const p = await pair();
    const limits = { requestsPerMinute: 5, tokensPerMinute: 2000 };
    await p.run(limits, 300, reserve(4));
    await p.same();
    // The budget refuses: the request stays counted, its tokens are given back.
    await p.run(limits, 400, reserve(7));
    await p.same();
    p.clock.advance(1000);
    await p.run(limits, 500, reserve(3));
    // The token limit refuses (300 + 0 + 500 + 1500 > 2000).
    await p.run(limits, 1500, reserve(1));
    await p.same();
    // An estimate above the token limit on its own.
    await p.run(limits, 5000, reserve(1));
    // The request limit refuses the sixth request of the minute.
    for (let i = 0; i < 4; i++) await p.run(limits, 0, reserve(0.5));
    await p.same();
  });

  it('leaves Redis as the separate scripts did when window entries and holds expire', async () => {
    const p = await pair();
    const limits = { requestsPerMinute: 3, tokensPerMinute: 1000 };
    await p.run(limits, 200, reserve(2));
    p.clock.advance(30_000);
    await p.run(limits, 300, reserve(2));
    // The first entry leaves the window: pruned, and its tokens leave the counter.
    p.clock.advance(30_001);
    await p.run(limits, 600, reserve(2));
    await p.same();
    // A refusal also prunes (and lowers the counter) before it answers.
    p.clock.advance(30_000);
    await p.run(limits, 900, reserve(1));
    await p.same();
    // Holds lapse after 15 minutes unsettled: the next admission drops them from the total.
    p.clock.advance(15 * 60_000 + 1);
    await p.run(limits, 100, reserve(9));
    await p.same();
    expect(await p.one.budgets.state(key, monthly)).toMatchObject({ heldUsd: 9 });
  });

  it('leaves Redis as the separate scripts did when the admission recharges from the wallet', async () => {
    const p = await pair();
    const small: BudgetLimit = { limitUsd: 2, period: 'daily' };
    const recharge = { thresholdUsd: 1, amountUsd: 5, monthlyCapUsd: 12 };
    for (const s of [p.one, p.other]) await s.wallets.credit('acme', 'topup', { amountUsd: 11 });
    const limits = { requestsPerMinute: 10 };
    for (let i = 0; i < 5; i++) {
      await p.run(limits, 0, reserve(2.5, { budget: small, autoRecharge: recharge, reference: `r${i}` }));
      p.clock.advance(10);
    }
    // Two recharges of $5 (the monthly cap of $12 has room for two), then the budget refuses.
    expect((await p.one.budgets.state(key, small)).rechargedThisMonthUsd).toBe(10);
    expect(await p.one.wallets.balance('acme')).toBe(1);
    // Ledger entries carry their stream ids, which differ; their contents are compared below.
    await p.same((name) => name.endsWith(':ledger'));
    const ledger = async (s: Stores) =>
      (await s.wallets.ledger('acme')).map(({ kind, amountUsd, balanceUsd, reference }) => ({
        kind,
        amountUsd,
        balanceUsd,
        reference,
      }));
    expect(await ledger(p.one)).toEqual(await ledger(p.other));
  });

  it('admits exactly the limit and never holds more than the budget under concurrent admissions from two pods', async () => {
    const clock = fakeClock();
    const prefix = `admc-${newId()}`;
    const pods = [await stores(prefix, clock), await stores(prefix, clock)];
    const limits = { requestsPerMinute: 25, tokensPerMinute: 1_000_000 };
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        pods[i % 2]!.admitter.admit(key, limits, 100, reserve(1, { reference: `c${i}` })),
      ),
    );
    const admitted = results.filter((r) => r.decision.allowed);
    const held = results.flatMap((r) => (r.reserve?.ok ? [r.reserve.reservation] : []));
    expect(admitted).toHaveLength(25);
    // $10 of budget, $1 each: ten holds, and the other fifteen admitted requests refused by it.
    expect(held).toHaveLength(10);
    const state = await pods[0]!.budgets.state(key, monthly);
    expect(state).toMatchObject({ heldUsd: 10, spentUsd: 0, remainingUsd: 0 });
    // Only the held requests keep their tokens in the window.
    const next = await pods[1]!.rateLimiter.acquire(key, { tokensPerMinute: 1_000_000 }, 0);
    expect(next.tokens?.remaining).toBe(1_000_000 - 10 * 100);
    // Settling every hold at half its estimate frees the rest of the budget, once.
    await Promise.all(held.map((reservation, i) => pods[i % 2]!.budgets.settle(reservation, 0.5)));
    expect(await pods[0]!.budgets.state(key, monthly)).toMatchObject({ heldUsd: 0, spentUsd: 5 });
  });

  it('keeps no weightless entries for budget refusals when only tokens are limited', async () => {
    const clock = fakeClock();
    const prefix = `admt-${newId()}`;
    const s = await stores(prefix, clock);
    const limits = { tokensPerMinute: 1_000_000 };
    for (let i = 0; i < 200; i++) await s.admitter.admit(key, limits, 10, reserve(1, { reference: `t${i}` }));
    const [window] = await admin.keys(`${prefix}:*:rl:w`);
    // Ten holds of $1 fit the $10 budget; the 190 refusals count nothing, so they add nothing
    // to the set the token limit's retry walk reads.
    expect(await admin.zcard(window!)).toBe(10);
    const next = await s.rateLimiter.acquire(key, limits, 0);
    expect(next.tokens?.remaining).toBe(1_000_000 - 10 * 10);
  });

  it('a token correction of the only entry in the window keeps the window’s expiry', async () => {
    const clock = fakeClock();
    const prefix = `admx-${newId()}`;
    const s = await stores(prefix, clock);
    const r = await s.admitter.admit(key, { requestsPerMinute: 5, tokensPerMinute: 1000 }, 100, reserve(1));
    const [window] = await admin.keys(`${prefix}:*:rl:w`);
    expect(await admin.pttl(window!)).toBeGreaterThan(0);
    await s.rateLimiter.adjust(r.decision.ticket!, 40);
    // Removing the only entry before adding its replacement deleted the key and its expiry.
    expect(await admin.pttl(window!)).toBeGreaterThan(0);
    expect(await admin.zcard(window!)).toBe(1);
    const next = await s.rateLimiter.acquire(key, { tokensPerMinute: 1000 }, 0);
    expect(next.tokens?.remaining).toBe(960);
  });

  it('reports the newest admission of a pod whose clock is ahead in the reset headers', async () => {
    const prefix = `admk-${newId()}`;
    const behind = fakeClock();
    const ahead = fakeClock(behind.now() + 3_000);
    const a = await stores(prefix, behind);
    const b = await stores(prefix, ahead);
    const limits = { requestsPerMinute: 10 };
    await b.admitter.admit(key, limits, 0, reserve(1));
    const r = await a.admitter.admit(key, limits, 0, reserve(1));
    // The window is empty again a minute after the newest entry, which is the other pod's.
    expect(r.decision.requests).toMatchObject({ remaining: 8, resetMs: 63_000 });
    behind.advance(5_000);
    const later = await a.admitter.admit(key, limits, 0, reserve(1));
    expect(later.decision.requests).toMatchObject({ remaining: 7, resetMs: 60_000 });
  });
});
