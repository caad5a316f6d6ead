import { describe, expect, it } from 'vitest';
import { budgetExceeded } from '../budget-refusal.ts';
import { toMicros } from '../../stores/money.ts';
import { batchHold, batchRefusal } from './batches.ts';

/** The amounts a batch 402 states, in order: remaining, budget, the hold, then its two parts. */
function statedMicros(message: string): number[] {
  return [...message.matchAll(/\$(\d+\.\d+)/g)].map((m) => toMicros(Number(m[1])));
}

function refusal(estimateUsd: number, outstandingUsd: number): string {
  const hold = batchHold(estimateUsd, { count: 2, usd: outstandingUsd });
  const inner = budgetExceeded({ limitUsd: 100, period: 'monthly' }, hold.holdUsd, 1, 'request');
  return batchRefusal(inner, hold, 2).message;
}

describe('a batch refusal', () => {
  it('names parts that add up to the hold it states, when each has a fraction of a micro-dollar', () => {
    // 80.0000004 + 80.0000004: each part reads $80.000001; the float sum rounded once was
    // $160.000001, one micro-dollar short of the parts.
    const message = refusal(80.0000004, 80.0000004);
    expect(message).toContain('estimated at $160.000002');
    expect(message).toContain("this batch's worst case of $80.000001 plus $80.000001 still held");
    expect(message).toContain("this key's 2 unsettled batches");
  });

  it('holds the sum of the parts it states, never less than the estimates (sweep)', () => {
    let wrong = 0;
    for (let i = 1; i < 5_000; i++) {
      const estimate = (i * 7919) / 1e7 + i / 3;
      const outstanding = (i * 104729) / 1e8 + i / 7;
      const hold = batchHold(estimate, { count: 2, usd: outstanding });
      const [, , held, part, rest] = statedMicros(refusal(estimate, outstanding));
      if (held !== part! + rest! || held !== toMicros(hold.holdUsd)) wrong++;
      if (toMicros(hold.holdUsd) < toMicros(estimate + outstanding, 'up')) wrong++;
    }
    expect(wrong).toBe(0);
  });
});
