import { describe, expect, it } from 'vitest';
import { parseStrictJson } from './strict-json.ts';

describe('parseStrictJson', () => {
  it.each([
    '{}',
    '[]',
    '{"a":1,"b":[1,2,{"c":"x\\"y"}],"d":{"e":null,"f":true,"g":-1.5e3}}',
    ' [ "a" , { } , [ ] ] ',
    '"just a string"',
    '42',
  ])('reads %s like JSON.parse, with no duplicates', (text) => {
    expect(parseStrictJson(text)).toEqual({ value: JSON.parse(text), duplicates: [] });
  });

  it('names duplicate keys with their path, at any depth', () => {
    const { duplicates } = parseStrictJson(
      '{"level":30,"msg":"x","level":"info","err":{"type":"a","type":"b"},"l":[{"k":1,"k":2}]}',
    );
    expect(duplicates).toEqual(['$.level', '$.err.type', '$.l[0].k']);
  });

  it('equal keys in sibling objects are not duplicates', () => {
    expect(parseStrictJson('{"a":{"x":1},"b":{"x":2}}').duplicates).toEqual([]);
  });

  it.each(['{"a":1', '{"a" 1}', '[1,]x', '{"a":1}}', ''])('rejects %j', (text) => {
    expect(() => parseStrictJson(text)).toThrow(SyntaxError);
  });

  it('reads deep nesting without recursion', () => {
    const deep = '['.repeat(20_000) + ']'.repeat(20_000);
    expect(parseStrictJson(deep).duplicates).toEqual([]);
  });
});
