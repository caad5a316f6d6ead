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

/** An esbuild plugin loading every TypeScript file through `escapeNonAscii`. */
export const asciiSource: Plugin = {
  name: 'ascii-source',
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, async (args) => ({
      contents: escapeNonAscii(await readFile(args.path, 'utf8')),
      loader: 'ts',
    }));
  },
};
