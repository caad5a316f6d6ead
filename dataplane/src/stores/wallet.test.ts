import { describe, expect, it } from 'vitest';
import { ledgerTrimCount } from './wallet.ts';

describe('ledgerTrimCount', () => {
  it('trims nothing until the ledger is a tenth of its bound over, then back to the bound', () => {
    expect(ledgerTrimCount(100_000, 100_000)).toBe(0);
    expect(ledgerTrimCount(100_099, 100_000)).toBe(0);
    expect(ledgerTrimCount(100_100, 100_000)).toBe(100);
    expect(ledgerTrimCount(1_003, 1_000)).toBe(0);
    expect(ledgerTrimCount(1_100, 1_000)).toBe(100);
    expect(ledgerTrimCount(44, 40)).toBe(4);
  });

  it('keeps small bounds exact', () => {
    expect(ledgerTrimCount(5, 5)).toBe(0);
    expect(ledgerTrimCount(6, 5)).toBe(1);
    expect(ledgerTrimCount(2, 1)).toBe(1);
  });

  it('trims at most 100 entries an append, so a ledger grown before its bound shrinks over several', () => {
    expect(ledgerTrimCount(1_000_000, 10)).toBe(100);
    expect(ledgerTrimCount(60, 10)).toBe(50);
  });
});
