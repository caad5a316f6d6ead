import { describe, expect, it } from 'vitest';
import { sameSpend, spendPatch, spendStatus } from './status.ts';

describe('spendStatus', () => {
  it('rounds to cents, never shows a negative remainder, omits what is unknown', () => {
    expect(spendStatus({ spentUsd: 1.23456, remainingUsd: 8.7654, lastUsedMs: 0 })).toEqual({
      spendUsd: 1.23,
      remainingUsd: 8.77,
      lastUsed: '1970-01-01T00:00:00.000Z',
    });
    expect(spendStatus({ spentUsd: 0, remainingUsd: -3, lastUsedMs: undefined })).toEqual({
      spendUsd: 0,
      remainingUsd: 0,
    });
    expect(spendStatus({ spentUsd: 2, remainingUsd: undefined, lastUsedMs: undefined })).toEqual({
      spendUsd: 2,
    });
  });

  it('a change below a cent is not a change worth a write', () => {
    const a = spendStatus({ spentUsd: 1.001, remainingUsd: 5, lastUsedMs: 1000 });
    const b = spendStatus({ spentUsd: 1.004, remainingUsd: 5, lastUsedMs: 1000 });
    expect(sameSpend(a, b)).toBe(true);
    expect(sameSpend(a, spendStatus({ spentUsd: 1.02, remainingUsd: 5, lastUsedMs: 1000 }))).toBe(false);
    expect(sameSpend(a, spendStatus({ spentUsd: 1.001, remainingUsd: 5, lastUsedMs: 2000 }))).toBe(false);
    expect(sameSpend(undefined, a)).toBe(false);
  });

  it('the patch clears what the status no longer shows (a merge patch keeps absent fields)', () => {
    expect(spendPatch(spendStatus({ spentUsd: 2, remainingUsd: undefined, lastUsedMs: undefined }))).toEqual({
      spendUsd: 2,
      remainingUsd: null,
      lastUsed: null,
    });
  });
});
