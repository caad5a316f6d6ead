import { describe, expect, it } from 'vitest';
import { escapeNonAscii, firstNonAscii } from './ascii.ts';

/** Evaluates a module-less snippet, as the bundle would run it. */
const run = (code: string): unknown => new Function(`return (${code});`)();

describe('escapeNonAscii', () => {
  const samples: Array<[string, string, string]> = [
    // [code, what it does, an input to apply it to]
    ['/[\'"“‘]$/', 'a class of quotes', 'say “'],
    ['/\\b(?:из|в|во)\\s+дом/iu', 'Cyrillic words, u flag, case-insensitive', 'ИЗ Дом'],
    ['/[^a-zа-яё]/gi', 'a negated class with a range of letters', 'ёж-Ы'],
    ['/[😀-😂]/u', 'an astral range in a u-flag class', 'x😁y'],
    ['/😀+/', 'an astral character without the u flag', '😀😀'],
    ['/\\→/', 'an identity escape', 'a→b'],
    ['/[.!?。！？\\n]/g', 'CJK punctuation', '好。的？'],
  ];

  it.each(samples)('%s (%s) matches what the original does', (code, _, input) => {
    const before = run(code) as RegExp;
    const after = run(escapeNonAscii(code)) as RegExp;
    expect(firstNonAscii(escapeNonAscii(code))).toBe(-1);
    expect(after.source === before.source).toBe(false);
    expect(after.flags).toBe(before.flags);
    expect(input.match(after)).toEqual(input.match(before));
    expect(input.replace(after, '#')).toBe(input.replace(before, '#'));
  });

  it('keeps strings, templates, identifiers and odd backslash runs equal', () => {
    const code = "[`→ ${'é'} ✓`, 'a\\→b', \"c\\\\→d\", ((café) => café + '😀')('x')]";
    const escaped = escapeNonAscii(code);
    expect(firstNonAscii(escaped)).toBe(-1);
    expect(run(escaped)).toEqual(run(code));
    expect(run(escaped)).toEqual(['→ é ✓', 'a→b', 'c\\→d', 'x😀']);
  });

  it('adds no line, so source map lines still hold', () => {
    const code = '// → comment\nconst a = "ü";\n/* « » */\n';
    const escaped = escapeNonAscii(code);
    expect(escaped.split('\n')).toHaveLength(code.split('\n').length);
    expect(escaped).toBe('// \\u2192 comment\nconst a = "\\u00fc";\n/* \\u00ab \\u00bb */\n');
  });

  it('leaves ASCII text as it is', () => {
    const code = 'const re = /\\u00e9|\\\\x/g; // plain';
    expect(escapeNonAscii(code)).toBe(code);
    expect(firstNonAscii(code)).toBe(-1);
    expect(firstNonAscii('abc·')).toBe(3);
  });
});
