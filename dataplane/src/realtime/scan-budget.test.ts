import { describe, expect, it } from 'vitest';
import { ScanBudget, ScanBudgets } from './scan-budget.ts';

describe('ScanBudget', () => {
  it('takes characters up to its limit per window, and refuses what does not fit without taking it', () => {
    const b = new ScanBudget(100, 60_000);
    expect(b.take(60, 0)).toBe(true);
    expect(b.take(50, 1_000)).toBe(false);
    expect(b.take(40, 1_000)).toBe(true);
    expect(b.take(1, 2_000)).toBe(false);
    expect(b.retryAfterS(2_000)).toBe(58);
    // The next window starts afresh.
    expect(b.take(100, 60_000)).toBe(true);
  });
});

describe('ScanBudgets', () => {
  it('shares one budget per key, keeps keys apart, and drops a key once its window has passed', () => {
    const budgets = new ScanBudgets(100, 60_000);
    const a1 = budgets.forKey('a');
    const a2 = budgets.forKey('a');
    expect(a1.take(80, 0)).toBe(true);
    // Another handle on the same key (another session) spends the same allowance.
    expect(a2.take(30, 1_000)).toBe(false);
    expect(a2.retryAfterS(1_000)).toBe(59);
    expect(budgets.take('b', 100, 1_000)).toBe(true);
    expect(budgets.size).toBe(2);
    // Past the window, the next use sweeps both idle entries; only the key used again returns.
    expect(budgets.take('c', 1, 61_000)).toBe(true);
    expect(budgets.size).toBe(1);
    // A dropped key starts afresh (nothing lost: its window had passed), under the same handle.
    expect(a1.take(100, 61_000)).toBe(true);
    expect(budgets.size).toBe(2);
  });

  it('keeps a key whose window is still running through a sweep', () => {
    const budgets = new ScanBudgets(100, 60_000);
    expect(budgets.take('old', 10, 0)).toBe(true);
    expect(budgets.take('recent', 90, 30_000)).toBe(true);
    expect(budgets.take('x', 1, 60_000)).toBe(true);
    expect(budgets.size).toBe(2);
    expect(budgets.take('recent', 20, 60_000)).toBe(false);
  });
});
