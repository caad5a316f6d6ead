import { describe, expect, it } from 'vitest';
import { planRecharge, rechargeForHold, rechargeMicros, type RechargeInput } from './recharge.ts';

const M = 1_000_000;
const base: RechargeInput = {
  availableMicros: 10 * M,
  estimateMicros: 1 * M,
  thresholdMicros: 5 * M,
  amountMicros: 20 * M,
  monthlyCapMicros: 100 * M,
  rechargedThisMonthMicros: 0,
  walletMicros: 1000 * M,
};
const plan = (over: Partial<RechargeInput>) => planRecharge({ ...base, ...over });

describe('planRecharge', () => {
  it('does nothing while the key stays at or above the threshold after the reservation', () => {
    expect(plan({})).toBe(0);
    expect(plan({ availableMicros: 6 * M })).toBe(0); // 6 - 1 = 5, not below 5
  });

  it('recharges one amount when the reservation would drop below the threshold', () => {
    expect(plan({ availableMicros: 5 * M })).toBe(1);
    expect(plan({ availableMicros: 0 })).toBe(1);
  });

  it('recharges as many amounts as needed to end at or above the threshold', () => {
    expect(plan({ availableMicros: 0, estimateMicros: 30 * M })).toBe(2); // 0 + 40 - 30 = 10 ≥ 5
    expect(plan({ availableMicros: 0, estimateMicros: 35 * M })).toBe(2); // 40 - 35 = 5 ≥ 5
    expect(plan({ availableMicros: 0, estimateMicros: 35 * M + 1 })).toBe(3);
  });

  it('repairs an overspent (negative) key', () => {
    expect(plan({ availableMicros: -30 * M, estimateMicros: 0 })).toBe(2);
  });

  it('respects the monthly cap in whole amounts', () => {
    expect(plan({ availableMicros: 0, rechargedThisMonthMicros: 80 * M })).toBe(1);
    expect(plan({ availableMicros: 0, rechargedThisMonthMicros: 81 * M })).toBe(0);
    expect(plan({ availableMicros: 0, estimateMicros: 50 * M, rechargedThisMonthMicros: 60 * M })).toBe(2);
    expect(plan({ availableMicros: 0, rechargedThisMonthMicros: 200 * M })).toBe(0);
  });

  it('never takes more than the wallet holds', () => {
    expect(plan({ availableMicros: 0, walletMicros: 19 * M })).toBe(0);
    expect(plan({ availableMicros: 0, walletMicros: 20 * M })).toBe(1);
    expect(plan({ availableMicros: 0, estimateMicros: 60 * M, walletMicros: 45 * M })).toBe(2);
    expect(plan({ availableMicros: 0, walletMicros: -5 * M })).toBe(0);
  });

  it('does nothing with a zero amount', () => {
    expect(plan({ availableMicros: 0, amountMicros: 0 })).toBe(0);
  });

  it('a zero threshold still recharges when the estimate does not fit', () => {
    expect(plan({ thresholdMicros: 0, availableMicros: 1 * M, estimateMicros: 2 * M })).toBe(1);
    expect(plan({ thresholdMicros: 0, availableMicros: 2 * M, estimateMicros: 2 * M })).toBe(0);
  });
});

describe('rechargeMicros', () => {
  it('converts the USD policy', () => {
    expect(rechargeMicros({ thresholdUsd: 5, amountUsd: 20.5, monthlyCapUsd: 100 })).toEqual({
      thresholdMicros: 5 * M,
      amountMicros: 20.5 * M,
      monthlyCapMicros: 100 * M,
    });
  });
});

describe('rechargeForHold', () => {
  const hold = (over: Partial<RechargeInput>) => rechargeForHold({ ...base, ...over });

  it('moves the planned amounts when the hold then fits, even if the key ends below its threshold', () => {
    expect(hold({ availableMicros: 0, estimateMicros: 30 * M })).toBe(40 * M);
    // The wallet pays for one amount: 0 + 20 holds 18, short of the threshold but admitted.
    expect(hold({ availableMicros: 0, estimateMicros: 18 * M, walletMicros: 25 * M })).toBe(20 * M);
    expect(hold({ availableMicros: 0, estimateMicros: 20 * M, walletMicros: 25 * M })).toBe(20 * M);
  });

  it('moves nothing when the hold would not fit even after the recharge', () => {
    expect(hold({ availableMicros: 0, estimateMicros: 20 * M + 1, walletMicros: 25 * M })).toBe(0);
    expect(hold({ availableMicros: 0, estimateMicros: 101 * M, monthlyCapMicros: 100 * M })).toBe(0);
    expect(
      hold({ availableMicros: -3 * M, estimateMicros: 0, amountMicros: 2 * M, walletMicros: 2 * M }),
    ).toBe(0);
  });

  it('moves nothing when no recharge is planned', () => {
    expect(hold({})).toBe(0);
    expect(hold({ walletMicros: 0, availableMicros: 0 })).toBe(0);
  });
});
