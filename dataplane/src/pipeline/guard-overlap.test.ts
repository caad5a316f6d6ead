import { describe, expect, it } from 'vitest';
import { SCAN_DURING_ADMISSION_MAX_BYTES, scansDuringAdmission } from './guard-overlap.ts';

const metered = { budget: { limitUsd: 1, period: 'monthly' as const } };
const limited = { rateLimit: { requestsPerMinute: 10 } };
const max = String(SCAN_DURING_ADMISSION_MAX_BYTES);

describe('scansDuringAdmission', () => {
  it('overlaps a small chat or Messages body of a key that admission sends to the store', () => {
    expect(scansDuringAdmission(metered, 'chat', '1024')).toBe(true);
    expect(scansDuringAdmission(limited, 'messages', max)).toBe(true);
  });

  it('waits for admission when the key has no budget and no rate limit (nothing to overlap)', () => {
    expect(scansDuringAdmission({}, 'chat', '1024')).toBe(false);
  });

  it('waits when the body is over the bound or its length is not declared', () => {
    expect(scansDuringAdmission(metered, 'chat', String(SCAN_DURING_ADMISSION_MAX_BYTES + 1))).toBe(false);
    expect(scansDuringAdmission(metered, 'chat', undefined)).toBe(false);
    expect(scansDuringAdmission(metered, 'chat', '')).toBe(false);
    expect(scansDuringAdmission(metered, 'chat', ['10', '10'])).toBe(false);
    expect(scansDuringAdmission(metered, 'chat', '1e3')).toBe(false);
    expect(scansDuringAdmission(metered, 'chat', '-1')).toBe(false);
    expect(scansDuringAdmission(metered, 'chat', 'abc')).toBe(false);
  });

  it('waits on endpoints whose guarded text is not all in the body', () => {
    for (const endpoint of ['responses', 'interactions', 'generate_content', 'rag.query'])
      expect(scansDuringAdmission(metered, endpoint, '1024')).toBe(false);
  });
});
