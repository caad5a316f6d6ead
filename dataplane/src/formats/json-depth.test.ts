import { describe, expect, it } from 'vitest';
import {
  DEFAULT_MAX_JSON_DEPTH,
  exceedsDepth,
  jsonDepthLimit,
  MAX_JSON_DEPTH_CEILING,
  textExceedsDepth,
} from './json-depth.ts';

const arrays = (n: number) => '['.repeat(n) + ']'.repeat(n);
const objects = (n: number) => '{"a":'.repeat(n) + 'null' + '}'.repeat(n);

/** Depth by definition (recursive; only for the small values of these tests). */
const depthOf = (v: unknown): number =>
  typeof v !== 'object' || v === null ? 0 : 1 + Math.max(0, ...Object.values(v).map(depthOf));

describe('exceedsDepth (parsed values) and textExceedsDepth (JSON text) agree on depth', () => {
  const cases: [string, number][] = [
    ['1', 0],
    ['"[[[{{{"', 0],
    ['[]', 1],
    ['{}', 1],
    ['[{}]', 2],
    ['[1,[2,[3]],{"a":[]}]', 3],
    ['{"a":"]]]}}}","b":{"c":"\\"[[["}}', 2],
    ['{"k\\\\":[["\\\\"]]}', 3],
    [arrays(64), 64],
    [objects(65), 65],
  ];
  for (const [text, depth] of cases) {
    it(`${text.slice(0, 30)} is ${depth} deep`, () => {
      const value = JSON.parse(text) as unknown;
      if (depth < 20) expect(depthOf(value)).toBe(depth);
      for (const check of [(l: number) => exceedsDepth(value, l), (l: number) => textExceedsDepth(text, l)]) {
        expect(check(depth)).toBe(false);
        if (depth > 0) expect(check(depth - 1)).toBe(true);
      }
    });
  }

  it('measures any depth JSON.parse accepts without overflowing', () => {
    const text = arrays(1_000_000);
    expect(exceedsDepth(JSON.parse(text), DEFAULT_MAX_JSON_DEPTH)).toBe(true);
    expect(textExceedsDepth(text, DEFAULT_MAX_JSON_DEPTH)).toBe(true);
    expect(textExceedsDepth(text, 1_000_000)).toBe(false);
  });

  it('finds the one deep branch among many shallow ones', () => {
    const wide = `{"xs":[${Array.from({ length: 500 }, () => '[1,{"a":2}]').join(',')}],"deep":${arrays(70)}}`;
    expect(exceedsDepth(JSON.parse(wide), 64)).toBe(true);
    expect(textExceedsDepth(wide, 64)).toBe(true);
    expect(exceedsDepth(JSON.parse(wide), 72)).toBe(false);
  });

  it('a text no longer than the limit is within it, one bracket more is not', () => {
    // Texts this short skip the scan: each level needs a character.
    expect(textExceedsDepth('['.repeat(64), 64)).toBe(false);
    expect(textExceedsDepth('['.repeat(65), 64)).toBe(true);
    expect(textExceedsDepth('{"a":[1]}', 1)).toBe(true);
  });

  it('leaves malformed text to the parser', () => {
    expect(textExceedsDepth('[[["unterminated', 2)).toBe(true);
    expect(textExceedsDepth('["unterminated [[[[[[', 2)).toBe(false);
  });
});

describe('jsonDepthLimit', () => {
  it('defaults to 64 and accepts whole numbers up to the ceiling', () => {
    expect(jsonDepthLimit(undefined)).toBe(DEFAULT_MAX_JSON_DEPTH);
    expect(jsonDepthLimit('')).toBe(DEFAULT_MAX_JSON_DEPTH);
    expect(jsonDepthLimit('128')).toBe(128);
    expect(jsonDepthLimit(MAX_JSON_DEPTH_CEILING)).toBe(MAX_JSON_DEPTH_CEILING);
  });

  it('refuses anything else, naming the setting and the range', () => {
    for (const bad of ['0', '-3', '2.5', 'deep', String(MAX_JSON_DEPTH_CEILING + 1), 1e9])
      expect(() => jsonDepthLimit(bad, 'GANTRY_MAX_JSON_DEPTH')).toThrow(
        `GANTRY_MAX_JSON_DEPTH must be a whole number from 1 to ${MAX_JSON_DEPTH_CEILING}`,
      );
  });
});
