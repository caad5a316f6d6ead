/**
 * Keeps the data plane's bundle pure ASCII. V8 holds a script's source for the process's life
 * (for lazy compilation and `Function#toString`), and one non-ASCII character anywhere makes it
 * store the whole source two bytes per character: 2.9 MB of heap for a 1.5 MB bundle. esbuild's
 * `charset: 'ascii'` escapes strings, template literals and identifiers but prints regular
 * expression literals as written, and the guardrail and routing patterns hold letters of many
 * scripts, so each file is escaped as it is loaded.
 */
import { readFile } from 'node:fs/promises';
import type { Plugin } from 'esbuild';
import ts from 'typescript';

/**
 * Writes every non-ASCII UTF-16 unit as `\uXXXX`, which stands for the same character in a
 * string, a template's cooked text, an identifier, a comment and a regular expression literal
 * (with or without the `u` flag; with it, an escaped surrogate pair is still one code point).
 * A character after an odd run of backslashes was an identity escape (`\é` is `é`), so that
 * backslash goes. No line changes, so the source map still points at the right TypeScript line.
 */
export function escapeNonAscii(text: string): string {
  return text.replace(/(\\*)([^\0-\x7f])/g, (_, slashes: string, ch: string) => {
    const kept = slashes.length % 2 === 1 ? slashes.slice(1) : slashes;
    return `${kept}\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
}

/** Index of the first non-ASCII character, or -1. */
export function firstNonAscii(text: string): number {
  return text.search(/[^\0-\x7f]/);
}

/** Where escaping changes what code means, and how to write it instead. */
export interface Unsafe {
  line: number;
  column: number;
  message: string;
}

/**
 * The first place where `escapeNonAscii` would change what `text` means, if any. U+2028/U+2029
 * end a `//` comment and, after a backslash, continue a string's line, and `\u2028` does
 * neither; a tagged template (`String.raw` among them) sees its raw text, which escaping
 * rewrites. Neither occurs in the sources; the build refuses them rather than change them.
 */
export function unsafeToEscape(text: string, fileName = 'source.ts'): Unsafe | undefined {
  const source = () => ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const at = (pos: number, message: string): Unsafe => {
    const { line, character } = source().getLineAndCharacterOfPosition(pos);
    return { line: line + 1, column: character, message };
  };
  const separator = text.search(/[\u2028\u2029]/);
  if (separator >= 0)
    return at(
      separator,
      `U+${text.charCodeAt(separator).toString(16).toUpperCase()} written as is: it ends a // comment and continues a line after a backslash, which its escape would not; write \\u${text.charCodeAt(separator).toString(16)} instead`,
    );
  if (firstNonAscii(text) < 0) return undefined;
  const file = source();
  let found: number | undefined;
  const visit = (node: ts.Node): void => {
    if (found !== undefined) return;
    if (ts.isTaggedTemplateExpression(node)) {
      const t = node.template;
      const parts = ts.isNoSubstitutionTemplateLiteral(t)
        ? [t]
        : [t.head, ...t.templateSpans.map((s) => s.literal)];
      for (const part of parts) {
        const start = part.getStart(file);
        const i = firstNonAscii(text.slice(start, part.end));
        if (i >= 0) {
          found = start + i;
          return;
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  if (found === undefined) return undefined;
  return at(
    found,
    'non-ASCII character in a tagged template: escaping it would change the raw text the tag sees; move it into a ${} substitution or a plain string',
  );
}

/** An esbuild plugin loading every TypeScript file through `escapeNonAscii`. */
export const asciiSource: Plugin = {
  name: 'ascii-source',
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, async (args) => {
      const text = await readFile(args.path, 'utf8');
      const unsafe = unsafeToEscape(text, args.path);
      if (unsafe === undefined) return { contents: escapeNonAscii(text), loader: 'ts' };
      const lineText = text.split('\n')[unsafe.line - 1] ?? '';
      return {
        errors: [
          {
            text: `cannot make this file ASCII: ${unsafe.message}`,
            location: { file: args.path, line: unsafe.line, column: unsafe.column, lineText },
          },
        ],
      };
    });
  },
};
