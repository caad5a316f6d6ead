import { describe, expect, it } from 'vitest';
import { MemoryLedger, type MemoryLedgerEntry } from './ledger.ts';

const entry = (ms: number, amount: number): MemoryLedgerEntry => ({
  id: `${ms}-0`,
  at: ms,
  kind: 'topup',
  amount,
  balance: 0,
  keyId: undefined,
  reference: undefined,
});

describe('MemoryLedger', () => {
  it('keeps the newest entries across many trims and finds, pages and sums what is kept', () => {
    const ledger = new MemoryLedger(1_000);
    for (let i = 1; i <= 5_000; i++) ledger.push(entry(i, i));
    // Trimmed back to 1000 each time 100 over: 5000 is a multiple of 100, so exactly 1000.
    expect(ledger.size).toBe(1_000);
    expect(ledger.trimmedCount).toBe(4_000);
    expect(ledger.trimmedMicros).toBe((4_000 * 4_001) / 2);
    expect(ledger.trimmedMicros + ledger.keptMicros()).toBe((5_000 * 5_001) / 2);
    expect(ledger.find('4001-0')?.amount).toBe(4_001);
    expect(ledger.find('4000-0')).toBeUndefined();
    expect(ledger.find('9999-0')).toBeUndefined();
    expect(ledger.page(undefined, 2).map((e) => e.amount)).toEqual([4_001, 4_002]);
    expect(ledger.page('10-0', 1).map((e) => e.amount)).toEqual([4_001]);
    expect(ledger.page('4999-0').map((e) => e.amount)).toEqual([5_000]);
    expect(ledger.page('5000-0')).toEqual([]);
  });
});
