/**
 * The in-process window skips expired entries by index and cuts them off in batches: across
 * many such cuts its counts, token totals and adjustments stay exactly those of the window.
 */
import { describe, expect, it } from 'vitest';
import { fakeClock } from '../testing/backends.ts';
import { MemoryRateLimiter } from './rate-limiter.ts';
import { MemoryState } from './state.ts';

describe('in-process rate window over many expiries', () => {
  it('counts exactly the last minute while old entries are dropped in batches', async () => {
    const clock = fakeClock(0);
    const state = new MemoryState();
    const limiter = new MemoryRateLimiter(state, clock.now);
    const key = { tenant: 't', keyId: 'k' };
    const limits = { requestsPerMinute: 1_000_000, tokensPerMinute: 1_000_000_000 };
    // One request every 10 ms with 3 tokens, corrected to 2: 6,000 live at a time, 20,000 in all.
    const admitted: { at: number; tokens: number }[] = [];
    for (let i = 0; i < 20_000; i++) {
      clock.set(i * 10);
      const d = await limiter.acquire(key, limits, 3);
      expect(d.allowed).toBe(true);
      await limiter.adjust(d.ticket!, 2);
      admitted.push({ at: i * 10, tokens: 2 });
      if (i % 997 === 0) {
        const live = admitted.filter((a) => a.at > i * 10 - 60_000);
        expect(d.requests!.remaining).toBe(limits.requestsPerMinute - live.length);
        // The decision counted the estimate; the adjustment since then took 1 token off.
        expect(d.tokens!.remaining).toBe(limits.tokensPerMinute - (live.length * 2 + 1));
      }
    }
    const win = [...state.rateWindows.values()][0]!;
    // Expired entries were cut off (not kept for ever), and never more than the live ones.
    expect(win.entries.length - win.head).toBe(6_000);
    expect(win.entries.length).toBeLessThanOrEqual(2 * 6_000 + 1);
    expect(win.byId.size).toBe(6_000);
    // A minute of silence empties the window.
    clock.set(20_000 * 10 + 60_000);
    const after = await limiter.acquire(key, limits, 5);
    expect(after.requests!.remaining).toBe(limits.requestsPerMinute - 1);
    expect(after.tokens!.remaining).toBe(limits.tokensPerMinute - 5);
  });
});
