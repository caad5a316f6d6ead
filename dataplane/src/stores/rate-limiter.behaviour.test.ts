/** One behavioural suite, run against the in-process and the Redis rate limiter. */
import { afterEach, describe, expect, it } from 'vitest';
import type { Stores } from './index.ts';
import type { RateDecision } from './rate-limiter.ts';
import { backends, fakeClock, type FakeClock, type StoreFixture } from './testing/backends.ts';

const key = { tenant: 'acme', keyId: 'ci' };

describe.each(backends)('rate limiter ($name)', (backend) => {
  let fixture: StoreFixture | undefined;
  let clock: FakeClock;

  async function open(real = false): Promise<Stores> {
    clock = fakeClock();
    fixture = await backend.create(real ? {} : { clock: clock.now });
    return fixture.open();
  }

  afterEach(async () => {
    await fixture?.close();
    fixture = undefined;
  });

  it('admits without counting when the key has no limits', async () => {
    const { rateLimiter } = await open();
    const d = await rateLimiter.acquire(key, {}, 1_000_000);
    expect(d).toMatchObject({ allowed: true, requests: undefined, tokens: undefined, ticket: undefined });
  });

  it('admits exactly requestsPerMinute, then refuses until the window slides', async () => {
    const { rateLimiter } = await open();
    const limits = { requestsPerMinute: 5 };
    for (let i = 0; i < 5; i++) {
      const d = await rateLimiter.acquire(key, limits, 0);
      expect(d.allowed).toBe(true);
      expect(d.requests).toEqual({
        allowed: true,
        limit: 5,
        remaining: 4 - i,
        resetMs: 60_000,
        retryAfterMs: 0,
      });
      clock.advance(1000);
    }
    const refused = await rateLimiter.acquire(key, limits, 0);
    expect(refused).toMatchObject({ allowed: false, retryAfterMs: 55_000, ticket: undefined });
    expect(refused.requests).toEqual({
      allowed: false,
      limit: 5,
      remaining: 0,
      resetMs: 59_000,
      retryAfterMs: 55_000,
    });
    clock.advance(54_999);
    expect((await rateLimiter.acquire(key, limits, 0)).allowed).toBe(false);
    clock.advance(1);
    const again = await rateLimiter.acquire(key, limits, 0);
    expect(again.allowed).toBe(true);
    expect(again.requests?.remaining).toBe(0);
    expect((await rateLimiter.acquire(key, limits, 0)).allowed).toBe(false);
  });

  it('limits tokens with the estimate and corrects with the actual count', async () => {
    const { rateLimiter } = await open();
    const limits = { tokensPerMinute: 1000 };
    const first = await rateLimiter.acquire(key, limits, 400);
    expect(first.tokens).toMatchObject({ allowed: true, remaining: 600 });
    expect(first.ticket?.tokens).toBe(400);
    // The call used less than estimated: the difference is handed back.
    await rateLimiter.adjust(first.ticket!, 100);
    const second = await rateLimiter.acquire(key, limits, 800);
    expect(second.tokens).toMatchObject({ allowed: true, remaining: 100 });
    // ...and more than estimated: the window is overdrawn.
    await rateLimiter.adjust(second.ticket!, 1200);
    const third = await rateLimiter.acquire(key, limits, 0);
    expect(third.allowed).toBe(false);
    expect(third.tokens).toMatchObject({ remaining: 0, retryAfterMs: 60_000 });
    clock.advance(60_000);
    expect((await rateLimiter.acquire(key, limits, 1000)).allowed).toBe(true);
  });

  it('forgets expired entries even when the request that pruned them is refused', async () => {
    const { rateLimiter } = await open();
    const limits = { requestsPerMinute: 2, tokensPerMinute: 1000 };
    expect((await rateLimiter.acquire(key, limits, 600)).allowed).toBe(true);
    clock.advance(30_000);
    expect((await rateLimiter.acquire(key, limits, 300)).allowed).toBe(true);
    // The 600 has left the window; 300 live + 800 asked is still too much.
    clock.advance(31_000);
    const refused = await rateLimiter.acquire(key, limits, 800);
    expect(refused.allowed).toBe(false);
    expect(refused.tokens).toMatchObject({ allowed: false, remaining: 700 });
    expect(refused.requests).toMatchObject({ allowed: true, remaining: 1 });
    // The refusal must not have kept the expired 600 on the books: 300 + 600 fits.
    const admitted = await rateLimiter.acquire(key, limits, 600);
    expect(admitted.allowed).toBe(true);
    expect(admitted.tokens).toMatchObject({ allowed: true, remaining: 100 });
    expect(admitted.requests).toMatchObject({ allowed: true, remaining: 0 });
    expect((await rateLimiter.acquire(key, limits, 0)).allowed).toBe(false);
  });

  it('applies a correction once per ticket and ignores one for a request that left the window', async () => {
    const { rateLimiter } = await open();
    const limits = { tokensPerMinute: 1000 };
    const a = await rateLimiter.acquire(key, limits, 100);
    await rateLimiter.adjust(a.ticket!, 300);
    await rateLimiter.adjust(a.ticket!, 300);
    expect((await rateLimiter.acquire(key, limits, 0)).tokens?.remaining).toBe(700);
    clock.advance(60_000);
    await rateLimiter.adjust(a.ticket!, 900);
    expect((await rateLimiter.acquire(key, limits, 0)).tokens?.remaining).toBe(1000);
  });

  it('refuses a request whose estimate alone exceeds tokensPerMinute', async () => {
    const { rateLimiter } = await open();
    const d = await rateLimiter.acquire(key, { requestsPerMinute: 10, tokensPerMinute: 1000 }, 1001);
    expect(d).toMatchObject({ allowed: false, tokensExceedLimit: true, retryAfterMs: 60_000 });
    expect(d.requests).toMatchObject({ allowed: true, remaining: 10 });
  });

  it('decides both dimensions in one call and counts nothing when either refuses', async () => {
    const { rateLimiter } = await open();
    const limits = { requestsPerMinute: 3, tokensPerMinute: 100 };
    expect((await rateLimiter.acquire(key, limits, 90)).allowed).toBe(true);
    clock.advance(10_000);
    const refused = await rateLimiter.acquire(key, limits, 20);
    expect(refused.allowed).toBe(false);
    expect(refused.requests).toMatchObject({ allowed: true, remaining: 2 });
    expect(refused.tokens).toMatchObject({ allowed: false, remaining: 10, retryAfterMs: 50_000 });
    const small = await rateLimiter.acquire(key, limits, 10);
    expect(small.allowed).toBe(true);
    expect(small.requests?.remaining).toBe(1);
    expect(small.tokens?.remaining).toBe(0);
  });

  it('keeps keys and tenants apart', async () => {
    const { rateLimiter } = await open();
    const limits = { requestsPerMinute: 1 };
    expect((await rateLimiter.acquire(key, limits, 0)).allowed).toBe(true);
    expect((await rateLimiter.acquire(key, limits, 0)).allowed).toBe(false);
    expect((await rateLimiter.acquire({ tenant: 'acme', keyId: 'other' }, limits, 0)).allowed).toBe(true);
    expect((await rateLimiter.acquire({ tenant: 'globex', keyId: 'ci' }, limits, 0)).allowed).toBe(true);
  });

  it('admits exactly the limit under 200 concurrent requests from 3 clients', async () => {
    await open();
    const handles = await Promise.all([fixture!.open(), fixture!.open(), fixture!.open()]);
    const limits = { requestsPerMinute: 50, tokensPerMinute: 1000 };
    const decisions: RateDecision[] = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        handles[i % 3]!.rateLimiter.acquire(key, limits, i < 100 ? 7 : 30),
      ),
    );
    const admitted = decisions.filter((d) => d.allowed);
    expect(admitted.length).toBeLessThanOrEqual(50);
    const tokens = admitted.reduce((s, d) => s + (d.ticket?.tokens ?? 0), 0);
    expect(tokens).toBeLessThanOrEqual(1000);
    // Whichever order they arrived in, the window is now full on one of the two dimensions.
    expect(admitted.length === 50 || tokens > 1000 - 7).toBe(true);
    const after = await handles[0]!.rateLimiter.acquire(key, limits, 0);
    expect(after.requests?.remaining).toBe(50 - admitted.length - (after.allowed ? 1 : 0));
  });

  it('admits exactly requestsPerMinute across 3 clients on the real clock', async () => {
    await open(true);
    const handles = await Promise.all([fixture!.open(), fixture!.open(), fixture!.open()]);
    const decisions = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        handles[i % 3]!.rateLimiter.acquire(key, { requestsPerMinute: 60 }, 0),
      ),
    );
    expect(decisions.filter((d) => d.allowed)).toHaveLength(60);
    const refused = decisions.find((d) => !d.allowed)!;
    expect(refused.retryAfterMs).toBeGreaterThan(55_000);
    expect(refused.retryAfterMs).toBeLessThanOrEqual(60_000);
  });
});
