import { describe, expect, it } from 'vitest';
import { formatUsd, fromMicros, MICROS_PER_USD, roundUsd, toMicros } from './money.ts';

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
