import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH_CEILING } from '../../formats/json-depth.ts';
import { isRecord, retryAfterMs, tryParseJson } from './retry-after.ts';

const NOW = Date.parse('2025-06-01T12:00:00Z');

describe('retryAfterMs', () => {
  it('no header → undefined', () => {
    expect(retryAfterMs({}, NOW)).toBeUndefined();
    expect(retryAfterMs({ 'retry-after': undefined }, NOW)).toBeUndefined();
  });

  it.each([
    ['0', 0],
    ['1', 1_000],
    ['30', 30_000],
    ['1.5', 1_500],
    ['120', 120_000],
  ])('seconds: retry-after %s → %i ms', (value, ms) => {
    expect(retryAfterMs({ 'retry-after': value }, NOW)).toBe(ms);
  });

  it('negative seconds are ignored', () => {
    expect(retryAfterMs({ 'retry-after': '-5' }, NOW)).toBeUndefined();
  });

  it('an HTTP date is turned into the time left from now', () => {
    expect(retryAfterMs({ 'retry-after': 'Sun, 01 Jun 2025 12:00:07 GMT' }, NOW)).toBe(7_000);
  });

  it('an HTTP date in the past means now (0), not a negative wait', () => {
    expect(retryAfterMs({ 'retry-after': 'Sun, 01 Jun 2025 11:59:00 GMT' }, NOW)).toBe(0);
  });

  it.each(['soon', 'abc123', 'Infinity', 'NaN'])('garbage (%s) → undefined', (value) => {
    expect(retryAfterMs({ 'retry-after': value }, NOW)).toBeUndefined();
  });

  it('retry-after-ms takes precedence over retry-after', () => {
    expect(retryAfterMs({ 'retry-after-ms': '250', 'retry-after': '30' }, NOW)).toBe(250);
    expect(retryAfterMs({ 'retry-after-ms': '0' }, NOW)).toBe(0);
    expect(retryAfterMs({ 'retry-after-ms': '12.5' }, NOW)).toBe(12.5);
  });

  it.each(['-1', 'x', 'Infinity'])('an invalid retry-after-ms (%s) falls back to retry-after', (ms) => {
    expect(retryAfterMs({ 'retry-after-ms': ms, 'retry-after': '2' }, NOW)).toBe(2_000);
    expect(retryAfterMs({ 'retry-after-ms': ms }, NOW)).toBeUndefined();
  });

  it.each(['', '   '])('an empty header (%j) is absent, never a wait of 0', (blank) => {
    expect(retryAfterMs({ 'retry-after-ms': blank, 'retry-after': '30' }, NOW)).toBe(30_000);
    expect(retryAfterMs({ 'retry-after': blank }, NOW)).toBeUndefined();
  });

  it('surrounding whitespace is tolerated', () => {
    expect(retryAfterMs({ 'retry-after': ' 3 ' }, NOW)).toBe(3_000);
  });

  it('repeated headers: the first value counts', () => {
    expect(retryAfterMs({ 'retry-after': ['4', '9'] }, NOW)).toBe(4_000);
    expect(retryAfterMs({ 'retry-after-ms': ['40', '90'] }, NOW)).toBe(40);
    expect(retryAfterMs({ 'retry-after': [] }, NOW)).toBeUndefined();
  });

  it('defaults now to the current time', () => {
    const in10s = new Date(Date.now() + 10_000).toUTCString();
    const ms = retryAfterMs({ 'retry-after': in10s });
    expect(ms).toBeGreaterThan(8_000);
    expect(ms).toBeLessThanOrEqual(10_000);
  });
});

describe('tryParseJson', () => {
  it('parses JSON and returns undefined for anything else', () => {
    expect(tryParseJson('{"a":[1,null]}')).toEqual({ a: [1, null] });
    expect(tryParseJson('"s"')).toBe('s');
    expect(tryParseJson('null')).toBeNull();
    expect(tryParseJson('')).toBeUndefined();
    expect(tryParseJson('<html>502</html>')).toBeUndefined();
    expect(tryParseJson('{"a":')).toBeUndefined();
  });

  it('treats text nested deeper than any request may be as not JSON', () => {
    const at = '['.repeat(MAX_JSON_DEPTH_CEILING) + ']'.repeat(MAX_JSON_DEPTH_CEILING);
    expect(tryParseJson(at)).toBeInstanceOf(Array);
    // What it returns is always safe to serialise again.
    expect(tryParseJson(`[${at}]`)).toBeUndefined();
    expect(tryParseJson('{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000))).toBeUndefined();
  });
});

describe('isRecord', () => {
  it('only plain objects', () => {
    expect(isRecord({})).toBe(true);
    expect(isRecord({ a: 1 })).toBe(true);
    expect(isRecord([])).toBe(false);
    expect(isRecord(null)).toBe(false);
    expect(isRecord(undefined)).toBe(false);
    expect(isRecord('x')).toBe(false);
    expect(isRecord(1)).toBe(false);
  });
});
