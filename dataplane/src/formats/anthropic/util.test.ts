import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH_CEILING } from '../json-depth.ts';
import { toolInput } from './util.ts';

describe('toolInput', () => {
  it('parses an object and turns anything unusable into {}', () => {
    expect(toolInput('{"city":"Paris"}')).toEqual({ city: 'Paris' });
    for (const bad of [undefined, '', ' ', '[1]', '{"a":', 'null']) expect(toolInput(bad)).toEqual({});
  });

  it('does not parse arguments nested deeper than any request may be', () => {
    const deep = (n: number) => '{"a":'.repeat(n) + '1' + '}'.repeat(n);
    expect(toolInput(deep(MAX_JSON_DEPTH_CEILING))).not.toEqual({});
    expect(toolInput(deep(MAX_JSON_DEPTH_CEILING + 1))).toEqual({});
    expect(toolInput(deep(200_000))).toEqual({});
  });
});
