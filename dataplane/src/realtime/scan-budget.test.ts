import { describe, expect, it } from 'vitest';
import { ScanBudgets } from './scan-budget.ts';

const allowance = { keyChars: 100, shareChars: 40 };

describe('ScanBudgets', () => {
  it('takes from the holder and the key, and nothing from either when refused', () => {
    const budgets = new ScanBudgets(allowance, 60_000);
    const alice = budgets.forHolder('k', 'alice');
    expect(alice.take(30, 0)).toMatchObject({ verdict: 'ok', holderUsed: 0, shareChars: 40 });
    expect(alice.take(20, 1_000)).toEqual({
      verdict: 'share',
      holderUsed: 30,
      shareChars: 40,
      retryAfterS: 59,
    });
    expect(alice.take(10, 2_000)).toMatchObject({ verdict: 'ok', holderUsed: 30 });
    expect(alice.take(41, 2_000).verdict).toBe('never');
    // The next window starts afresh.
    expect(alice.take(40, 60_000)).toMatchObject({ verdict: 'ok', holderUsed: 0 });
  });

  it("keeps holders apart within a key, and still bounds the key's total", () => {
    const budgets = new ScanBudgets(allowance, 60_000);
    expect(budgets.take('k', 'mallory', 40, 0).verdict).toBe('ok');
    expect(budgets.take('k', 'mallory', 1, 0).verdict).toBe('share');
    // Another holder of the same key has its own share.
    expect(budgets.take('k', 'alice', 40, 0).verdict).toBe('ok');
    // A second handle on the same holder (another session of one client secret) shares its part.
    expect(budgets.forHolder('k', 'alice').take(1, 0).verdict).toBe('share');
    expect(budgets.take('k', 'bob', 20, 0).verdict).toBe('ok');
    // 100 taken: a holder within its share is refused for the key (not its doing).
    expect(budgets.take('k', 'carol', 1, 30_000)).toMatchObject({
      verdict: 'key',
      holderUsed: 0,
      retryAfterS: 30,
    });
    // Other keys are untouched.
    expect(budgets.take('other', 'mallory', 40, 30_000).verdict).toBe('ok');
  });

  it('drops a key once its window has passed, and keeps one whose window still runs', () => {
    const budgets = new ScanBudgets(allowance, 60_000);
    expect(budgets.take('old', 'h', 10, 0).verdict).toBe('ok');
    expect(budgets.take('recent', 'h', 40, 30_000).verdict).toBe('ok');
    expect(budgets.take('x', 'h', 1, 60_000).verdict).toBe('ok');
    expect(budgets.size).toBe(2);
    expect(budgets.take('recent', 'h', 1, 60_000).verdict).toBe('share');
    // A dropped key starts afresh (nothing lost: its window had passed).
    expect(budgets.take('old', 'h', 40, 60_000).verdict).toBe('ok');
  });
});
