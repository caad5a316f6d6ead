import { describe, expect, it } from 'vitest';
import { ScanBudget } from './scan-budget.ts';

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
