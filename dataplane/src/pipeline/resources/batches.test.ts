import { describe, expect, it } from 'vitest';
import { budgetExceeded } from '../budget-refusal.ts';
import type { OwnedRecord } from '../../stores/ownership/types.ts';
import { heldRefusal, outstandingOf } from './batches.ts';

const inner = budgetExceeded({ limitUsd: 100, period: 'monthly' }, 80.0000004, 1, 'request');
const record = (estimateUsd: number | undefined): OwnedRecord => ({
  family: 'batch',
  id: 'b',
  tenant: 't',
  keyId: 'k',
  deployment: 'd',
  model: 'm',
  createdAt: 0,
  estimateUsd,
});

describe('a batch refusal', () => {
  it("adds what the key's unsettled batches hold, rounded up as the holds are", () => {
    const message = heldRefusal(
      inner,
      { count: 2, usd: 80.0000004 },
      'batch',
      'batches',
      'they finish and are charged',
    ).message;
    expect(message).toContain('estimated at $80.000001');
    expect(message).toContain("$80.000001 of the budget is held for this key's 2 unsettled batches");
  });

  it('names the count alone when the refusal states what started work holds already', () => {
    const message = heldRefusal(
      inner,
      { count: 1, usd: 0.9 },
      'batch',
      'batches',
      'they finish',
      true,
    ).message;
    expect(message).toBe(
      `${inner.message}; the held part includes this key's 1 unsettled batch, which count until they finish`,
    );
  });

  it('is the budget refusal alone when nothing else is held', () => {
    expect(heldRefusal(inner, { count: 0, usd: 0 }, 'batch', 'batches', 'never')).toBe(inner);
  });
});

describe('outstandingOf', () => {
  it('counts the estimates of the records not settled, and no record without one', () => {
    const records = [record(1.5), record(2), record(undefined), record(0), record(4)];
    expect(outstandingOf(records, [false, true, false, false, false])).toEqual({ count: 2, usd: 5.5 });
  });
});
