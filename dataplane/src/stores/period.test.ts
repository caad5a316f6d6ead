import { describe, expect, it } from 'vitest';
import { monthKey, periodRetentionMs, periodWindow } from './period.ts';

const at = (iso: string) => Date.parse(iso);

describe('periodWindow', () => {
  it('daily windows are UTC days', () => {
    const w = periodWindow('daily', at('2025-03-09T23:59:59.999Z'));
    expect(w).toEqual({
      key: 'd2025-03-09',
      startMs: at('2025-03-09T00:00:00Z'),
      endMs: at('2025-03-10T00:00:00Z'),
    });
    expect(periodWindow('daily', at('2025-03-10T00:00:00Z')).key).toBe('d2025-03-10');
  });

  it('ignores the local time zone', () => {
    // 23:30 UTC is already the next day in UTC+1, still this day in UTC.
    expect(periodWindow('daily', at('2025-06-30T23:30:00-00:00')).key).toBe('d2025-06-30');
    expect(periodWindow('daily', at('2025-07-01T00:30:00+02:00')).key).toBe('d2025-06-30');
  });

  it('monthly windows are UTC calendar months, leap years included', () => {
    expect(periodWindow('monthly', at('2024-02-29T12:00:00Z'))).toEqual({
      key: 'm2024-02',
      startMs: at('2024-02-01T00:00:00Z'),
      endMs: at('2024-03-01T00:00:00Z'),
    });
    expect(periodWindow('monthly', at('2024-12-31T23:59:59.999Z'))).toEqual({
      key: 'm2024-12',
      startMs: at('2024-12-01T00:00:00Z'),
      endMs: at('2025-01-01T00:00:00Z'),
    });
    expect(periodWindow('monthly', at('2025-01-01T00:00:00Z')).key).toBe('m2025-01');
  });

  it('rolls over a year on the last day of December', () => {
    const w = periodWindow('daily', at('2024-12-31T10:00:00Z'));
    expect(w.endMs).toBe(at('2025-01-01T00:00:00Z'));
  });

  it('a remembered window answers only inside itself, whichever way the clock moves', () => {
    const times = [
      '2025-03-31T23:59:59.999Z',
      '2025-04-01T00:00:00Z',
      '2025-03-15T00:00:00Z',
      '2025-04-01T00:00:00Z',
    ];
    expect(times.map((t) => periodWindow('monthly', at(t)).key)).toEqual([
      'm2025-03',
      'm2025-04',
      'm2025-03',
      'm2025-04',
    ]);
    expect(times.map((t) => periodWindow('daily', at(t)).key)).toEqual([
      'd2025-03-31',
      'd2025-04-01',
      'd2025-03-15',
      'd2025-04-01',
    ]);
    expect(times.map((t) => monthKey(at(t)))).toEqual(['2025-03', '2025-04', '2025-03', '2025-04']);
  });

  it('the total period never ends', () => {
    expect(periodWindow('total', at('2025-05-05T05:05:05Z'))).toEqual({
      key: 'total',
      startMs: 0,
      endMs: undefined,
    });
  });

  it('every instant of a window maps to the same key and the next instant after it does not', () => {
    for (const period of ['daily', 'monthly'] as const) {
      const w = periodWindow(period, at('2025-02-14T08:00:00Z'));
      expect(periodWindow(period, w.startMs).key).toBe(w.key);
      expect(periodWindow(period, w.endMs! - 1).key).toBe(w.key);
      expect(periodWindow(period, w.endMs!).key).not.toBe(w.key);
    }
  });
});

describe('monthKey', () => {
  it('is the UTC calendar month', () => {
    expect(monthKey(at('2025-01-31T23:59:59Z'))).toBe('2025-01');
    expect(monthKey(at('2025-02-01T00:00:00Z'))).toBe('2025-02');
    expect(monthKey(at('0999-03-01T00:00:00Z'))).toBe('0999-03');
  });
});

describe('periodRetentionMs', () => {
  it('keeps a counter until its period ends plus the grace', () => {
    const now = at('2025-03-09T23:00:00Z');
    expect(periodRetentionMs(periodWindow('daily', now), now, 1000)).toBe(3_600_000 + 1000);
    expect(periodRetentionMs(periodWindow('total', now), now)).toBeUndefined();
  });
});
