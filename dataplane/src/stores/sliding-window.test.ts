import { describe, expect, it } from 'vitest';
import {
  decideWindow,
  hasLimits,
  isLive,
  toRateDecision,
  unlimitedDecision,
  wholeTokens,
  type WindowEntry,
} from './sliding-window.ts';

const W = 60_000;
const NOW = 1_000_000;
const entries = (...spec: [number, number][]): WindowEntry[] =>
  spec.map(([ago, tokens]) => ({ at: NOW - ago, tokens }));
const sum = (es: WindowEntry[]) => es.reduce((s, e) => s + e.tokens, 0);

describe('isLive', () => {
  it('an entry counts for exactly one window', () => {
    expect(isLive(NOW, NOW, W)).toBe(true);
    expect(isLive(NOW - W + 1, NOW, W)).toBe(true);
    expect(isLive(NOW - W, NOW, W)).toBe(false);
  });
});

describe('decideWindow: requests', () => {
  it('admits into an empty window', () => {
    const o = decideWindow([], 0, NOW, { requestsPerMinute: 1 }, 0, W);
    expect(o).toEqual({
      allowed: true,
      count: 1,
      tokens: 0,
      requestsRetryMs: 0,
      tokensRetryMs: 0,
      tokensExceedLimit: false,
      newestAt: NOW,
    });
  });

  it('admits up to the limit and refuses the next', () => {
    const es = entries([30_000, 0], [20_000, 0]);
    expect(decideWindow(es, 0, NOW, { requestsPerMinute: 3 }, 0, W).allowed).toBe(true);
    const refused = decideWindow(
      entries([30_000, 0], [20_000, 0], [10_000, 0]),
      0,
      NOW,
      { requestsPerMinute: 3 },
      0,
      W,
    );
    expect(refused.allowed).toBe(false);
    expect(refused.count).toBe(3);
    // The oldest entry (30 s ago) frees a slot in 30 s.
    expect(refused.requestsRetryMs).toBe(30_000);
    expect(refused.newestAt).toBe(NOW - 10_000);
  });

  it('when over the limit (limit lowered) waits for enough entries to expire', () => {
    const es = entries([50_000, 0], [40_000, 0], [30_000, 0], [20_000, 0]);
    // limit 2, count 4: needs 3 to expire → the third oldest (30 s ago) → 30 s.
    expect(decideWindow(es, 0, NOW, { requestsPerMinute: 2 }, 0, W).requestsRetryMs).toBe(30_000);
  });
});

describe('decideWindow: tokens', () => {
  it('admits when the estimate fits exactly', () => {
    const es = entries([10_000, 600]);
    const o = decideWindow(es, 600, NOW, { tokensPerMinute: 1000 }, 400, W);
    expect(o.allowed).toBe(true);
    expect(o.tokens).toBe(1000);
  });

  it('refuses and waits until enough tokens leave the window', () => {
    const es = entries([50_000, 300], [40_000, 300], [10_000, 300]);
    const o = decideWindow(es, sum(es), NOW, { tokensPerMinute: 1000 }, 500, W);
    expect(o.allowed).toBe(false);
    // needs 900 + 500 - 1000 = 400 freed: the two oldest → the second expires in 20 s.
    expect(o.tokensRetryMs).toBe(20_000);
    expect(o.tokens).toBe(900);
    expect(o.tokensExceedLimit).toBe(false);
  });

  it('flags an estimate larger than the whole limit', () => {
    const o = decideWindow([], 0, NOW, { tokensPerMinute: 1000 }, 1001, W);
    expect(o.allowed).toBe(false);
    expect(o.tokensExceedLimit).toBe(true);
    expect(o.tokensRetryMs).toBe(W);
  });

  it('a zero-token request passes a full token window', () => {
    expect(decideWindow(entries([1, 1000]), 1000, NOW, { tokensPerMinute: 1000 }, 0, W).allowed).toBe(true);
  });
});

describe('decideWindow: both dimensions', () => {
  it('refuses when either refuses; retry waits for both', () => {
    const es = entries([50_000, 100], [5_000, 800]);
    const o = decideWindow(es, 900, NOW, { requestsPerMinute: 2, tokensPerMinute: 1000 }, 500, W);
    expect(o.allowed).toBe(false);
    expect(o.requestsRetryMs).toBe(10_000);
    expect(o.tokensRetryMs).toBe(55_000);
    const d = toRateDecision(o, { requestsPerMinute: 2, tokensPerMinute: 1000 }, NOW, W, undefined);
    expect(d.retryAfterMs).toBe(55_000);
    expect(d.requests).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: 10_000 });
    expect(d.tokens).toMatchObject({ allowed: false, remaining: 100, retryAfterMs: 55_000 });
  });

  it('a missing or zero limit does not limit', () => {
    const es = entries([1, 5000], [2, 5000]);
    expect(decideWindow(es, 10_000, NOW, { tokensPerMinute: 100_000 }, 0, W).allowed).toBe(true);
    expect(decideWindow(es, 10_000, NOW, { requestsPerMinute: 2 }, 9999, W).allowed).toBe(false);
    expect(
      decideWindow(es, 10_000, NOW, { requestsPerMinute: 0, tokensPerMinute: undefined }, 5, W).allowed,
    ).toBe(true);
  });
});

describe('toRateDecision', () => {
  const ticket = { tenant: 't', keyId: 'k', id: 'x', tokens: 10 };

  it('reports headers for an admitted request', () => {
    const o = decideWindow(
      entries([30_000, 100]),
      100,
      NOW,
      { requestsPerMinute: 10, tokensPerMinute: 1000 },
      10,
      W,
    );
    const d = toRateDecision(o, { requestsPerMinute: 10, tokensPerMinute: 1000 }, NOW, W, ticket);
    expect(d).toEqual({
      allowed: true,
      retryAfterMs: 0,
      requests: { allowed: true, limit: 10, remaining: 8, resetMs: W, retryAfterMs: 0 },
      tokens: { allowed: true, limit: 1000, remaining: 890, resetMs: W, retryAfterMs: 0 },
      tokensExceedLimit: false,
      ticket,
    });
  });

  it('omits unlimited dimensions and the ticket of a refused request', () => {
    const o = decideWindow(entries([45_000, 0]), 0, NOW, { requestsPerMinute: 1 }, 5, W);
    const d = toRateDecision(o, { requestsPerMinute: 1 }, NOW, W, ticket);
    expect(d.tokens).toBeUndefined();
    expect(d.ticket).toBeUndefined();
    expect(d.requests).toEqual({
      allowed: false,
      limit: 1,
      remaining: 0,
      resetMs: 15_000,
      retryAfterMs: 15_000,
    });
  });

  it('remaining never goes negative after an upward correction', () => {
    const o = decideWindow(entries([1, 5000]), 5000, NOW, { tokensPerMinute: 1000 }, 0, W);
    expect(toRateDecision(o, { tokensPerMinute: 1000 }, NOW, W, undefined).tokens?.remaining).toBe(0);
  });

  it('the unlimited decision admits with nothing to report', () => {
    expect(unlimitedDecision()).toMatchObject({ allowed: true, requests: undefined, tokens: undefined });
    expect(hasLimits({})).toBe(false);
    expect(hasLimits({ tokensPerMinute: 5 })).toBe(true);
  });
});

describe('wholeTokens', () => {
  it('rounds up and clamps garbage to zero', () => {
    expect(wholeTokens(1.2)).toBe(2);
    expect(wholeTokens(-3)).toBe(0);
    expect(wholeTokens(Number.NaN)).toBe(0);
    expect(wholeTokens(7)).toBe(7);
  });
});

describe('decideWindow: live entries from an offset', () => {
  it('decides on entries[from..] exactly as on that slice alone', () => {
    const stale = entries([70_000, 900], [65_000, 900]);
    const live = entries([50_000, 300], [30_000, 200], [10_000, 400]);
    const limits = { requestsPerMinute: 3, tokensPerMinute: 1000 };
    for (const estimate of [0, 100, 200]) {
      const viaOffset = decideWindow([...stale, ...live], sum(live), NOW, limits, estimate, W, stale.length);
      expect(viaOffset).toEqual(decideWindow(live, sum(live), NOW, limits, estimate, W));
    }
    // Nothing live after the offset: an empty window.
    expect(decideWindow(stale, 0, NOW, limits, 10, W, stale.length)).toEqual(
      decideWindow([], 0, NOW, limits, 10, W),
    );
  });
});
