/**
 * The budget settle script (lua/budget.ts) on a real redis-server, for what its fewer calls
 * must still do: the period's spend counter always expires, holds settled concurrently from
 * two pods leave nothing held and count each charge once, expired holds of other requests are
 * dropped, and a held total with no hold behind it is reset.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testRedisUrl } from '../../../../test/harness/redis.ts';
import type { BudgetLimit, Reservation } from '../budget.ts';
import { newId } from '../ids.ts';
import { createRedisStores, type Stores } from '../index.ts';
import { fakeClock, type FakeClock } from '../testing/backends.ts';
import { KeySpace } from './keys.ts';

const key = { tenant: 'acme', keyId: 'ci' };
const monthly: BudgetLimit = { limitUsd: 10, period: 'monthly' };

describe('budget settle script on a real redis-server', () => {
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

  async function pods(n: number): Promise<{ clock: FakeClock; keys: KeySpace; pods: Stores[] }> {
    const clock = fakeClock();
    const prefix = `settle-${newId()}`;
    const out: Stores[] = [];
    for (let i = 0; i < n; i++) {
      const s = createRedisStores({ url }, { prefix, clock: clock.now });
      opened.push(s);
      await s.ready();
      out.push(s);
    }
    return { clock, keys: new KeySpace(prefix), pods: out };
  }

  async function hold(s: Stores, estimateUsd: number): Promise<Reservation> {
    const r = await s.budgets.reserve({ ...key, budget: monthly, estimateUsd });
    if (!r.ok) throw new Error('not held');
    return r.reservation;
  }

  it('gives the spend counter its expiry when a charge creates it, and keeps it', async () => {
    const {
      clock,
      keys,
      pods: [s],
    } = await pods(1);
    const first = await hold(s!, 1);
    await s!.budgets.settle(first, 0.5);
    const spent = keys.spent(key, first.periodKey);
    const ttl = await admin.pttl(spent);
    expect(ttl).toBeGreaterThan(first.periodRetentionMs! - 10_000);
    expect(ttl).toBeLessThanOrEqual(first.periodRetentionMs!);
    clock.advance(60_000);
    await s!.budgets.settle(await hold(s!, 1), 0.25);
    const later = await admin.pttl(spent);
    // Still expiring, at the period's end plus the grace (not pushed further by each charge).
    expect(later).toBeGreaterThan(0);
    expect(later).toBeLessThanOrEqual(ttl);
    expect(await admin.get(spent)).toBe('750000');
    // A counter that expired is created again, with its expiry again.
    await admin.del(spent);
    await s!.budgets.settle(await hold(s!, 1), 0.1);
    expect(await admin.pttl(spent)).toBeGreaterThan(0);
  });

  it('leaves nothing held and charges each hold once when two pods settle concurrently', async () => {
    const { pods: both } = await pods(2);
    const holds = await Promise.all(Array.from({ length: 8 }, (_, i) => hold(both[i % 2]!, 1)));
    expect(await both[0]!.budgets.state(key, monthly)).toMatchObject({ heldUsd: 8 });
    // Every settle sent twice, from both pods at once: a retry after a lost reply.
    const results = await Promise.all(
      holds.flatMap((r) => [both[0]!.budgets.settle(r, 0.5), both[1]!.budgets.settle(r, 0.5)]),
    );
    expect(results.filter((r) => r.applied)).toHaveLength(8);
    expect(await both[1]!.budgets.state(key, monthly)).toMatchObject({
      heldUsd: 0,
      spentUsd: 4,
      remainingUsd: 6,
    });
  });

  it("drops other requests' expired holds, and resets a held total no hold is behind", async () => {
    const {
      clock,
      keys,
      pods: [s],
    } = await pods(1);
    const old = await hold(s!, 3);
    clock.advance(15 * 60_000 + 1);
    const fresh = await hold(s!, 2);
    // The old hold lapsed; the admission that made the fresh one dropped it.
    expect(await s!.budgets.state(key, monthly)).toMatchObject({ heldUsd: 2 });
    // A total left behind by a lost hold (no reservation under it) is not kept.
    await admin.hset(keys.budget(key), 'held', '9000000');
    const settled = await s!.budgets.settle(fresh, 1);
    expect(settled).toMatchObject({ applied: true, chargedUsd: 1, remainingUsd: 9 });
    expect(await admin.hget(keys.budget(key), 'held')).toBe('0');
    // Settling the lapsed hold late still charges it, once, with nothing held for it.
    expect(await s!.budgets.settle(old, 2)).toMatchObject({ applied: true, remainingUsd: 7 });
    expect(await s!.budgets.settle(old, 2)).toMatchObject({ applied: false });
    expect(await s!.budgets.state(key, monthly)).toMatchObject({ heldUsd: 0, spentUsd: 3 });
  });
});
