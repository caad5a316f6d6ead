import { describe, expect, it } from 'vitest';
import {
  chargeableUsd,
  chargeMicros,
  formatUsd,
  fromMicros,
  MAX_CHARGE_USD,
  MICROS_PER_USD,
  roundUsd,
  toMicros,
} from './money.ts';

describe('toMicros', () => {
  it.each([
    [0, 0],
    [1, 1_000_000],
    [0.1, 100_000],
    [0.3, 300_000],
    [0.000001, 1],
    [50, 50_000_000],
    [123.456789, 123_456_789],
    [-2.5, -2_500_000],
  ])('converts %s USD exactly', (usd, micros) => {
    expect(toMicros(usd)).toBe(micros);
    expect(toMicros(usd, 'up')).toBe(micros);
  });

  it('does not let float noise round whole amounts up', () => {
    expect((0.1 + 0.2) * MICROS_PER_USD).not.toBe(300_000);
    expect(2.01 * MICROS_PER_USD).not.toBe(2_010_000);
    expect(toMicros(2.01, 'up')).toBe(2_010_000);
    expect(toMicros(2.01)).toBe(2_010_000);
    expect(toMicros(0.1, 'up')).toBe(100_000);
    expect(toMicros(0.1 + 0.2, 'up')).toBe(300_000);
    expect(toMicros(1.1 * 3, 'up')).toBe(3_300_000);
  });

  it('does not let float noise round large whole amounts up either (past ~$8,600)', () => {
    // $11,024.88 reached as a sum (a budget plus a top-up) is 11024.880000000001.
    const sum = 10_000 + 1024.88;
    expect(sum * MICROS_PER_USD).toBeGreaterThan(11_024_880_000);
    expect(toMicros(sum, 'up')).toBe(11_024_880_000);
    expect(formatUsd(sum, 'up')).toBe('$11024.88');
    expect(toMicros(11024.88, 'up')).toBe(11_024_880_000);
    expect(toMicros(8600.07, 'up')).toBe(8_600_070_000);
    expect(toMicros(1234567.1, 'up')).toBe(1_234_567_100_000);
    expect(toMicros(3_000_000 + 5 * 0.001, 'up')).toBe(3_000_000_005_000);
    // A real fraction of a micro-dollar is still held in full at these amounts.
    expect(toMicros(11024.8800005, 'up')).toBe(11_024_880_001);
    expect(toMicros(11024.8800001, 'up')).toBe(11_024_880_001);
    expect(toMicros(1e7 + 1e-7, 'up')).toBe(10_000_000_000_001);
  });

  it('holds exactly the cents of every cents amount up to $100M (sweep)', () => {
    let wrong = 0;
    for (let cents = 1; cents < 2_000_000; cents += 7)
      for (const dollars of [0, 100, 10_000, 1_000_000, 100_000_000]) {
        const usd = dollars + cents / 100;
        if (toMicros(usd, 'up') !== dollars * MICROS_PER_USD + cents * 10_000) wrong++;
      }
    expect(wrong).toBe(0);
  });

  it('holds every whole micro-dollar amount as itself, and a fraction above it as the next (sweep)', () => {
    let wrong = 0;
    for (let micros = 1; micros < 10_000_000_000_000; micros = Math.floor(micros * 1.37) + 13) {
      const usd = micros / MICROS_PER_USD;
      if (toMicros(usd, 'up') !== micros || toMicros(usd) !== micros) wrong++;
      if (toMicros(usd + 3e-7, 'up') !== micros + 1) wrong++;
    }
    expect(wrong).toBe(0);
  });

  it('holds a fraction of a micro-dollar in full past $1e8, up to $1e9', () => {
    expect(toMicros(1e8 + 4e-8, 'up')).toBe(100_000_000_000_001);
    expect(toMicros(3e8 + 2e-7, 'up')).toBe(300_000_000_000_001);
    // The tolerance of 4 ulps was 0.5 µ$ here: this held $500,000,000.000000 (review probe).
    expect(toMicros(5e8 + 3e-7, 'up')).toBe(500_000_000_000_001);
    expect(toMicros(999_999_999.9999996, 'up')).toBe(1_000_000_000_000_000);
    // Whole amounts stay whole.
    expect(toMicros(5e8, 'up')).toBe(500_000_000_000_000);
    expect(toMicros(1e9, 'up')).toBe(1_000_000_000_000_000);
    expect(toMicros(123_456_789.12, 'up')).toBe(123_456_789_120_000);
  });

  it('never holds less than the exact value of the double, beyond 0.01 µ$ of noise (exact sweep to $2e9)', () => {
    // The double's exact value is mantissa * 2^exponent; compare in BigInt hundredths of a µ$.
    const view = new DataView(new ArrayBuffer(8));
    /** micros + slack / 100 < the exact µ$ value of `usd`. */
    const below = (usd: number, micros: number, slack: bigint): boolean => {
      view.setFloat64(0, usd);
      const bits = view.getBigUint64(0);
      const biased = Number((bits >> 52n) & 0x7ffn);
      const mantissa = (bits & ((1n << 52n) - 1n)) | (biased === 0 ? 0n : 1n << 52n);
      const exponent = (biased || 1) - 1075;
      const held = BigInt(micros) * 100n + slack;
      const exact = mantissa * 100_000_000n;
      return exponent >= 0 ? held < exact << BigInt(exponent) : held << BigInt(-exponent) < exact;
    };
    let seed = 12345;
    const random = (): number => {
      seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
      return seed / 2 ** 32;
    };
    const wrong: string[] = [];
    for (const base of [1, 1e3, 1e5, 1e7, 1e8, 3e8, 5e8, 1e9])
      for (let i = 0; i < 20_000; i++) {
        const usd = base * (1 + random());
        const micros = toMicros(usd, 'up');
        if (below(usd, micros, 1n) && wrong.length < 5) wrong.push(`${usd} -> ${micros}`);
        // Nor a whole micro-dollar more than needed.
        if (!below(usd, micros - 1, 0n) && wrong.length < 5) wrong.push(`${usd} -> ${micros} (over)`);
      }
    expect(wrong).toEqual([]);
  });

  it('rounds sub-micro amounts to nearest (half away from zero) or up', () => {
    expect(toMicros(0.0000004)).toBe(0);
    expect(toMicros(0.0000005)).toBe(1);
    expect(toMicros(0.0000015)).toBe(2);
    expect(toMicros(-0.0000005)).toBe(-1);
    expect(toMicros(0.0000001, 'up')).toBe(1);
    expect(toMicros(1.0000001, 'up')).toBe(1_000_001);
    expect(toMicros(-0.0000009, 'up')).toBe(0);
  });

  it('prices per token exactly once per request', () => {
    // 1234 prompt tokens at $0.15/M and 567 output tokens at $0.60/M
    const usd = (1234 * 0.15 + 567 * 0.6) / 1e6;
    expect(toMicros(usd)).toBe(525);
  });

  it('never returns -0', () => {
    expect(Object.is(toMicros(-0), 0)).toBe(true);
    expect(Object.is(toMicros(-0.0000001), 0)).toBe(true);
  });

  it('rejects non-finite and out-of-range amounts', () => {
    expect(() => toMicros(Number.NaN)).toThrow(RangeError);
    expect(() => toMicros(Number.POSITIVE_INFINITY)).toThrow(RangeError);
    expect(() => toMicros(1e12)).toThrow(RangeError);
  });
});

describe('fromMicros / roundUsd', () => {
  it('round-trips', () => {
    for (const m of [0, 1, 999_999, 1_000_000, 123_456_789, -42]) expect(toMicros(fromMicros(m))).toBe(m);
  });

  it('rounds to what the stores record', () => {
    expect(roundUsd(0.1234564)).toBe(0.123456);
    expect(roundUsd(0.1234565)).toBe(0.123457);
    expect(roundUsd(0.1 + 0.2)).toBe(0.3);
  });
});

describe('formatUsd', () => {
  it.each([
    [0, '$0.00'],
    [1.5, '$1.50'],
    [50, '$50.00'],
    [0.00015, '$0.00015'],
    [0.000001, '$0.000001'],
    [12.345678, '$12.345678'],
    [0.1 + 0.2, '$0.30'],
    [-3.25, '-$3.25'],
  ])('%s → %s', (usd, text) => {
    expect(formatUsd(usd)).toBe(text);
  });
});

describe('chargeMicros', () => {
  it('books an ordinary charge as toMicros does, a negative one as nothing', () => {
    expect(chargeMicros(1.5)).toBe(1_500_000);
    expect(chargeMicros(-2)).toBe(0);
  });
  it.each([-1e12, -1e300, -Infinity])('books %d as nothing, not a throw', (usd) => {
    expect(chargeMicros(usd)).toBe(0);
  });
  it.each([MAX_CHARGE_USD * 10, 1e300, Infinity, Number.NaN])(
    'books %d at the ceiling, not a throw',
    (usd) => {
      expect(chargeableUsd(usd)).toBe(MAX_CHARGE_USD);
      expect(chargeMicros(usd)).toBe(MAX_CHARGE_USD * 1_000_000);
      expect(() => toMicros(usd)).toThrow();
    },
  );
});
