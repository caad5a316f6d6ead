import { describe, expect, it } from 'vitest';
import { decodeVlq, originalLine, parseMappings } from './sourcemap.ts';

describe('source maps', () => {
  it('decodes base64 VLQ fields', () => {
    expect(decodeVlq('AAAA')).toEqual([0, 0, 0, 0]);
    expect(decodeVlq('AACA')).toEqual([0, 0, 1, 0]);
    expect(decodeVlq('D')).toEqual([-1]);
    expect(decodeVlq('gB')).toEqual([16]);
  });

  it('maps generated columns to original lines', () => {
    // Line 0: col 0 -> src line 0; col 10 -> src line 2; line 1: col 4 -> src line 5.
    const table = parseMappings('AAAA,UAEA;IAGA');
    expect(originalLine(table, 0, 3)).toBe(1);
    expect(originalLine(table, 0, 12)).toBe(3);
    expect(originalLine(table, 1, 9)).toBe(6);
    expect(originalLine(table, 7, 0)).toBeUndefined();
  });
});
