import { describe, expect, it } from 'vitest';
import { budgetExceeded, usdText } from './budget-refusal.ts';

describe('usdText', () => {
  it.each([
    [0.1 + 0.2, 'nearest', '$0.30'],
    [2_500_000.3, 'nearest', '$2500000.30'],
    [3.3e-7, 'up', '$0.000001'],
    [3.3e-7, 'nearest', '$0.00'],
    [1e9, 'up', '$1000000000.00'],
    // Past exact micro-dollars (a sum of many capped batch estimates): cents, not a RangeError.
    [2.5e10, 'up', '$25000000000.00'],
  ] as const)('%s (%s) → %s', (usd, rounding, text) => {
    expect(usdText(usd, rounding)).toBe(text);
  });
});

describe('budgetExceeded', () => {
  it('is a 402 stating each amount from micro-dollars, the estimate as held (rounded up)', () => {
    const e = budgetExceeded({ limitUsd: 0.1 + 0.2, period: 'daily' }, 1e-7, 0.30000000000000004, 'response');
    expect(e.status).toBe(402);
    expect(e.message).toBe(
      "budget exceeded: $0.30 remaining of this key's daily budget of $0.30, and this response is estimated at $0.000001",
    );
  });
});
