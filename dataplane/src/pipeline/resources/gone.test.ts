import { describe, expect, it } from 'vitest';
import {
  after404,
  COUNTED_404_SPACING_MS,
  GONE_AFTER_404S,
  GONE_AFTER_MS,
  goneForGood,
  missingOf,
  withMissing,
  type Missing,
} from './gone.ts';

const H = 3_600_000;

/** The marks after a 404 at each time, in order. */
const seen = (...at: number[]): Missing | undefined =>
  at.reduce<Missing | undefined>((m, t) => after404(m, t), undefined);

describe('goneForGood', () => {
  it('is false for one 404, and for any number of them within minutes', () => {
    expect(goneForGood(seen(0), 0)).toBe(false);
    const burst = seen(...Array.from({ length: 1000 }, (_, i) => i * 100));
    expect(burst).toEqual({ first404At: 0, count404: 1 });
    expect(goneForGood(burst, 100_000)).toBe(false);
  });

  it('is true once three 404s are spread over a day, and not a millisecond sooner', () => {
    expect(GONE_AFTER_404S).toBe(3);
    expect(GONE_AFTER_MS).toBe(24 * H);
    expect(goneForGood(seen(0, 12 * H, 24 * H), 24 * H)).toBe(true);
    expect(goneForGood(seen(0, 12 * H, 24 * H - 1), 24 * H - 1)).toBe(false);
    // Two reads a day apart are two counted 404s, not three.
    expect(goneForGood(seen(0, 24 * H), 24 * H)).toBe(false);
    expect(goneForGood(seen(0, 24 * H, 24 * H + 1), 24 * H + 1)).toBe(true);
  });

  it('counts a sweep every minute for a day as three, gone at the day', () => {
    let m: Missing | undefined;
    let goneAt: number | undefined;
    for (let t = 0; t <= 25 * H && goneAt === undefined; t += 60_000) {
      m = after404(m, t);
      if (goneForGood(m, t)) goneAt = t;
    }
    expect(goneAt).toBe(24 * H);
  });

  it('counts nothing for a clock behind the first mark', () => {
    expect(seen(10 * H, 0, 5 * H)).toEqual({ first404At: 10 * H, count404: 1 });
  });

  it('spaces counted 404s by half the day', () => {
    expect(COUNTED_404_SPACING_MS).toBe(12 * H);
    expect(seen(0, 12 * H - 1)).toEqual({ first404At: 0, count404: 1 });
    expect(seen(0, 12 * H)).toEqual({ first404At: 0, count404: 2 });
  });
});

describe('marks on a record', () => {
  it('reads none from a record without them or with unusable ones', () => {
    expect(missingOf({})).toBeUndefined();
    expect(missingOf({ first404At: Number.NaN, count404: 2 })).toBeUndefined();
    expect(missingOf({ first404At: 5, count404: 0 })).toBeUndefined();
    expect(missingOf({ first404At: 5, count404: 2 })).toEqual({ first404At: 5, count404: 2 });
  });

  it('adds and clears them, leaving the rest of the record', () => {
    const r = { id: 'file-1', first404At: 1, count404: 1 };
    expect(withMissing(r, { first404At: 1, count404: 2 })).toEqual({
      id: 'file-1',
      first404At: 1,
      count404: 2,
    });
    expect(withMissing(r, undefined)).toEqual({ id: 'file-1' });
  });
});
