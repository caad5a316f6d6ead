/**
 * The one-step settlement (budget settle + token adjust + usage record in one script) on the
 * shared real redis-server: each part lands once, a repeated settlement (a lost reply tried
 * again) changes nothing, and neither does redoing each part through its own store, which is
 * what the pipeline does when the one step fails.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testRedisUrl } from '../../../../test/harness/redis.ts';
import { newId } from '../ids.ts';
import { createRedisStores, type Stores } from '../index.ts';
import { fakeClock } from '../testing/backends.ts';
import { T0, usageRecord } from '../usage/fixtures.ts';

const budget = { limitUsd: 10, period: 'monthly' as const };
const limits = { requestsPerMinute: 100, tokensPerMinute: 10_000 };
const DAY = '2025-03-14';

describe('redis one-step settlement', () => {
  const clock = fakeClock(T0);
  let stores: Stores;

  beforeAll(async () => {
    stores = createRedisStores({ url: testRedisUrl() }, { prefix: `settle-${newId()}`, clock: clock.now });
    await stores.ready();
  });
  afterAll(() => stores?.close());

  /** A fresh key, admitted with a $1 hold and 500 tokens counted. */
  async function admitted(keyId = newId()) {
    const key = { tenant: 'acme', keyId };
    const { decision, reserve } = await stores.admitter.admit(key, limits, 500, {
      ...key,
      budget,
      estimateUsd: 1,
    });
    if (!reserve?.ok || !decision.ticket) throw new Error('not admitted');
    return { key, reservation: reserve.reservation, ticket: decision.ticket };
  }

  /** Spend, holds, counted tokens and recorded requests of a key. */
  async function observed(key: { tenant: string; keyId: string }) {
    const state = await stores.budgets.state(key, budget);
    const rate = await stores.rateLimiter.acquire(key, { tokensPerMinute: limits.tokensPerMinute }, 0);
    const rows = await stores.usage.rollups({ tenant: key.tenant, keyId: key.keyId, from: DAY, to: DAY });
    return {
      spentUsd: state.spentUsd,
      heldUsd: state.heldUsd,
      tokens: limits.tokensPerMinute - (rate.tokens?.remaining ?? NaN),
      requests: rows.reduce((n, r) => n + r.requests, 0),
      costUsd: rows.reduce((n, r) => n + r.costUsd, 0),
    };
  }

  it('settles the budget, corrects the tokens and records the request once, however often it is sent', async () => {
    const { key, reservation, ticket } = await admitted();
    const record = usageRecord({ ...key, costUsd: 0.25, promptTokens: 100, completionTokens: 20 });
    const req = { budget: { reservation, amountUsd: 0.25 }, rate: { ticket, actualTokens: 120 }, record };
    await stores.settler!.settle(req);
    const once = await observed(key);
    expect(once).toEqual({ spentUsd: 0.25, heldUsd: 0, tokens: 120, requests: 1, costUsd: 0.25 });

    // The same settlement again (its reply was lost), then each part on its own (the fallback).
    await stores.settler!.settle(req);
    expect((await stores.budgets.settle(reservation, 0.25)).applied).toBe(false);
    await stores.rateLimiter.adjust(ticket, 120);
    expect(await stores.usage.record(record)).toBe(false);
    expect(await observed(key)).toEqual(once);
  });

  it('releases a hold without charging when the request cost nothing', async () => {
    const { key, reservation, ticket } = await admitted();
    await stores.settler!.settle({
      budget: { reservation, amountUsd: 0 },
      rate: { ticket, actualTokens: 0 },
      record: usageRecord({ ...key, costUsd: 0, status: 502, promptTokens: 0, completionTokens: 0 }),
    });
    expect(await observed(key)).toEqual({ spentUsd: 0, heldUsd: 0, tokens: 0, requests: 1, costUsd: 0 });
  });

  it('settles whichever parts a key has: budget alone, tokens alone', async () => {
    const a = await admitted();
    await stores.settler!.settle({
      budget: { reservation: a.reservation, amountUsd: 0.5 },
      record: usageRecord({ ...a.key, costUsd: 0.5 }),
    });
    // The ticket was never adjusted: its estimate stays counted.
    expect(await observed(a.key)).toMatchObject({ spentUsd: 0.5, heldUsd: 0, tokens: 500, requests: 1 });

    const b = await admitted();
    await stores.settler!.settle({
      rate: { ticket: b.ticket, actualTokens: 42 },
      record: usageRecord({ ...b.key, costUsd: 0.1 }),
    });
    // The hold was not settled: it stays held until it expires.
    expect(await observed(b.key)).toMatchObject({ spentUsd: 0, heldUsd: 1, tokens: 42, requests: 1 });
  });

  it('still charges a reservation whose hold already expired', async () => {
    const { key, reservation, ticket } = await admitted();
    clock.advance(reservation.expiresAt - clock.now() + 1);
    try {
      await stores.settler!.settle({
        budget: { reservation, amountUsd: 0.75 },
        rate: { ticket, actualTokens: 600 },
        record: usageRecord({ ...key, costUsd: 0.75, at: clock.now() }),
      });
      expect(await observed(key)).toMatchObject({ spentUsd: 0.75, heldUsd: 0, requests: 1 });
    } finally {
      clock.set(T0);
    }
  });
});
