import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { asciiSource, escapeNonAscii, firstNonAscii, unsafeToEscape } from './ascii.ts';

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

describe('unsafeToEscape: where escaping would change the code, the build refuses', () => {
  it('a tagged template, String.raw among them, would see other raw text: refused at its character', () => {
    // The evidence: escaped, these evaluate to something else.
    for (const code of ['String.raw`é\\é`', '((s) => s.raw[0])`→`'])
      expect(run(escapeNonAscii(code))).not.toEqual(run(code));
    expect(unsafeToEscape('const a = 1;\nconst s = String.raw`x é`;')).toMatchObject({ line: 2, column: 23 });
    expect(unsafeToEscape('tag`a${b}c→`')?.message).toMatch(
      /tagged template: escaping it would change the raw text/,
    );
    expect(unsafeToEscape('f()`${x}`.at(0) + o.t`\n«`')).toMatchObject({ line: 2, column: 0 });
  });

  it('non-ASCII outside a tagged template’s text is safe, also inside its substitutions', () => {
    for (const code of [
      '`é ${x}`',
      "tag`a${'é'}b`",
      "String.raw`x` + 'é' // é",
      '/é/u.test(`→`)',
      'const café = 1;',
    ])
      expect(unsafeToEscape(code), code).toBeUndefined();
  });

  it('U+2028/U+2029 written as is are refused wherever they are (comment, after a backslash, in a string)', () => {
    // In a // comment it ends the comment; after a backslash it continues the string's line.
    const inComment = '(() => { let x = 1; // note\u2028x = 2;\n return x; })()';
    const continued = "'a\\\u2028b'";
    expect(run(inComment)).toBe(2);
    expect(run(escapeNonAscii(inComment))).toBe(1);
    expect(run(continued)).toBe('ab');
    expect(run(escapeNonAscii(continued))).not.toBe('ab');
    expect(unsafeToEscape(inComment)).toMatchObject({ line: 1, column: 27 });
    expect(unsafeToEscape(continued)?.message).toBe(
      'U+2028 written as is: it ends a // comment and continues a line after a backslash, which its escape would not; write \\u2028 instead',
    );
    expect(unsafeToEscape("const s = 'p\u2029q';")?.message).toMatch(/^U\+2029 written as is/);
  });

  it('the plugin fails the build naming the file, line and reason', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ascii-'));
    try {
      const file = join(dir, 'raw.ts');
      await writeFile(file, 'export const ok = "é";\nexport const raw = String.raw`\\d+ €`;\n');
      const result = build({
        entryPoints: [file],
        bundle: true,
        write: false,
        logLevel: 'silent',
        plugins: [asciiSource],
      });
      await expect(result).rejects.toThrow(
        /raw\.ts:2:.*cannot make this file ASCII: non-ASCII character in a tagged template/s,
      );
      await writeFile(file, 'export const ok = `é ${String.raw`x`}`;\n');
      const fine = await build({
        entryPoints: [file],
        bundle: true,
        write: false,
        logLevel: 'silent',
        charset: 'ascii',
        plugins: [asciiSource],
      });
      expect(firstNonAscii(fine.outputFiles[0]!.text)).toBe(-1);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
