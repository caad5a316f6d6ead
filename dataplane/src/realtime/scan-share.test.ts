import { describe, expect, it } from 'vitest';
import { countsAgainstClient, judgeScan, scanAllowance, scanRefusalError } from './scan-share.ts';

describe('scanAllowance', () => {
  it("splits the key's total evenly between its most sessions, above the floor and never past the total", () => {
    const limits = {
      maxScannedCharsPerMinute: 16_000_000,
      maxSessionsPerKey: 10,
      minScannedCharsPerSession: 100_000,
    };
    expect(scanAllowance(limits)).toEqual({ keyChars: 16_000_000, shareChars: 1_600_000 });
    // Many sessions per key: the floor keeps a conversation possible; the total still caps the key.
    expect(scanAllowance({ ...limits, maxSessionsPerKey: 1_000 })).toEqual({
      keyChars: 16_000_000,
      shareChars: 100_000,
    });
    expect(scanAllowance({ ...limits, minScannedCharsPerSession: 50_000_000 }).shareChars).toBe(16_000_000);
    expect(scanAllowance({ ...limits, maxSessionsPerKey: 0 }).shareChars).toBe(16_000_000);
  });
});

describe('judgeScan', () => {
  const a = { keyChars: 1_000, shareChars: 250 };

  it('lets through what fits both the holder’s share and the key’s total, to the last character', () => {
    expect(judgeScan(a, { keyUsed: 0, holderUsed: 0 }, 250)).toBe('ok');
    expect(judgeScan(a, { keyUsed: 750, holderUsed: 0 }, 250)).toBe('ok');
  });

  it('refuses a holder past its share even while the key has room: one user cannot take the key', () => {
    expect(judgeScan(a, { keyUsed: 250, holderUsed: 250 }, 1)).toBe('share');
  });

  it('refuses a holder within its share when the key total is spent: the CPU bound holds', () => {
    expect(judgeScan(a, { keyUsed: 1_000, holderUsed: 0 }, 1)).toBe('key');
    expect(judgeScan(a, { keyUsed: 900, holderUsed: 100 }, 101)).toBe('key');
  });

  it('calls an event bigger than a share one that can never pass, whatever was used', () => {
    expect(judgeScan(a, { keyUsed: 0, holderUsed: 0 }, 251)).toBe('never');
    expect(judgeScan({ keyChars: 1_000, shareChars: 1_000 }, { keyUsed: 0, holderUsed: 0 }, 1_001)).toBe(
      'never',
    );
  });

  it("counts only the client's own doing toward closing it", () => {
    expect(countsAgainstClient('never')).toBe(true);
    expect(countsAgainstClient('share')).toBe(true);
    expect(countsAgainstClient('key')).toBe(false);
  });
});

describe('scanRefusalError', () => {
  const base = { chars: 300, holderUsed: 200, shareChars: 250, retryAfterS: 42, holder: 'this session' };

  it('says an oversized event can never pass, with no retry', () => {
    const e = scanRefusalError({ ...base, verdict: 'never' });
    expect(e.type).toBe('request_too_large');
    expect(e.status).toBe(413);
    expect(e.message).toContain('can never pass');
    expect(e.message).not.toMatch(/retry/);
  });

  it("speaks of the holder's own share, never of the key or its other users", () => {
    for (const verdict of ['share', 'key'] as const) {
      const e = scanRefusalError({ ...base, verdict, chars: 10 });
      expect(e.type).toBe('rate_limit_exceeded');
      expect(e.message).toContain('this session');
      expect(e.message).toContain('200');
      expect(e.message).toContain('250');
      expect(e.message).toMatch(/retry after 42s$/);
      expect(e.message).not.toMatch(/key|other/);
    }
  });
});
