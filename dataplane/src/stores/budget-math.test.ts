import { describe, expect, it } from 'vitest';
import { allowanceLeft, available, fits, splitCharge } from './budget-math.ts';

describe('budget math', () => {
  it('available = allowance left + credit − held', () => {
    expect(available({ limit: 100, spent: 30, credit: 0, held: 20 })).toBe(50);
    expect(available({ limit: 100, spent: 130, credit: 50, held: 10 })).toBe(40);
    expect(available({ limit: 100, spent: 100, credit: 0, held: 5 })).toBe(-5);
  });

  it('allowance never goes below zero', () => {
    expect(allowanceLeft(10, 25)).toBe(0);
    expect(allowanceLeft(10, 4)).toBe(6);
  });

  it('fits needs something left and the estimate within it', () => {
    expect(fits(10, 10)).toBe(true);
    expect(fits(10, 11)).toBe(false);
    expect(fits(0, 0)).toBe(false);
    expect(fits(-1, 0)).toBe(false);
    expect(fits(1, 0)).toBe(true);
  });

  it('charges the allowance first, the credit after, and the rest is overspend', () => {
    expect(splitCharge(100, 0, 50, 30)).toEqual({ fromAllowance: 30, fromCredit: 0, overspend: 0 });
    expect(splitCharge(100, 90, 50, 30)).toEqual({ fromAllowance: 10, fromCredit: 20, overspend: 0 });
    expect(splitCharge(100, 120, 50, 30)).toEqual({ fromAllowance: 0, fromCredit: 30, overspend: 0 });
    expect(splitCharge(100, 90, 5, 30)).toEqual({ fromAllowance: 10, fromCredit: 5, overspend: 15 });
    expect(splitCharge(100, 100, 0, 7)).toEqual({ fromAllowance: 0, fromCredit: 0, overspend: 7 });
    expect(splitCharge(100, 100, 0, 0)).toEqual({ fromAllowance: 0, fromCredit: 0, overspend: 0 });
  });

  it('never takes credit below zero', () => {
    expect(splitCharge(0, 0, -5, 10)).toEqual({ fromAllowance: 0, fromCredit: 0, overspend: 10 });
  });
});
