/** The in-process wallet's bookkeeping costs, counted (not timed): they must not grow with the day's movements. */
import { describe, expect, it } from 'vitest';
import { fakeClock } from '../testing/backends.ts';
import { MemoryState } from './state.ts';
import { MemoryWalletStore } from './wallet.ts';

const DAY = 24 * 3_600_000;

describe('MemoryWalletStore idempotency memory', () => {
  it('visits only the expired ids and the first live one on each movement', async () => {
    const clock = fakeClock();
    const mem = new MemoryState();
    const wallets = new MemoryWalletStore(mem, clock.now);
    const credit = (i: number) =>
      wallets.credit('acme', 'cache_credit', { amountUsd: 0.000001, idempotencyKey: `cache:r${i}` });
    for (let i = 0; i < 10_000; i++) await credit(i);
    const ids = mem.wallet('acme').idempotency;
    expect(ids.size).toBe(10_000);
    // 10k ids remembered, none expired: each further credit looks at one.
    const before = ids.visited;
    for (let i = 10_000; i < 11_000; i++) await credit(i);
    expect(ids.visited - before).toBe(1_000);

    // A day later all 11k lapse at once: one sweep drops them, the next credits look at one each.
    clock.advance(DAY);
    const atExpiry = ids.visited;
    await credit(20_000);
    expect(ids.visited - atExpiry).toBe(11_000);
    expect(ids.size).toBe(1);
    const after = ids.visited;
    for (let i = 20_001; i < 20_101; i++) await credit(i);
    expect(ids.visited - after).toBe(100);
  });

  it('still refuses a repeat within the day and applies it again after', async () => {
    const clock = fakeClock();
    const wallets = new MemoryWalletStore(new MemoryState(), clock.now);
    const m = { amountUsd: 1, idempotencyKey: 'req-1' };
    expect(await wallets.credit('acme', 'topup', m)).toMatchObject({ ok: true, duplicate: false });
    clock.advance(DAY - 1);
    expect(await wallets.credit('acme', 'topup', m)).toMatchObject({ ok: true, duplicate: true });
    clock.advance(1);
    expect(await wallets.credit('acme', 'topup', m)).toMatchObject({ ok: true, duplicate: false });
    expect(await wallets.balance('acme')).toBe(2);
  });
});
