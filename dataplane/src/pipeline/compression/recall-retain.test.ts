/**
 * What a filed CCR entry keeps alive, measured. V8 keeps a slice or a regex match of a string
 * as a view of the whole parent, so an entry's 300-character label cut from 8 MiB of tool-call
 * arguments, or a keyword matched in the label and content joined, kept megabytes the store's
 * character bound never saw (20 entries counted as 43,740 characters held 336 MiB). Measured
 * in a child process started with --expose-gc, so the heap is collected before it is read.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect, it } from 'vitest';

const here = (file: string) => pathToFileURL(join(import.meta.dirname, file)).href;

// Ten sessions, each one tool call with 2 MiB of arguments and a 1 MiB output of long
// lower-case identifiers: V8 makes a slice (a view) only of 13+ characters, and lower-casing
// returns such a word itself, so a keyword matched there is a view of the label and output
// joined, another 1 MiB per entry unless it is copied.
const PROBE = `
import { entriesToFile } from '${here('recall.ts')}';
import { TUNING } from '${here('profile.ts')}';
import { MemoryCcrStore } from '${here('ccr/memory.ts')}';
const gc = globalThis.gc;
const store = new MemoryCcrStore({ maxChars: 64 * 1024 * 1024 });
const tuning = Object.values(TUNING)[0];
const output = (s) => {
  const lines = ['// src/a.ts'];
  for (let i = 0; lines.length < 40_000; i++) lines.push('let session' + s + '_identifier_' + i + ' = 1;');
  return lines.join('\\n').slice(0, 1024 * 1024);
};
async function fileOne(s) {
  const args = JSON.stringify({ path: 'src/a.ts', pad: ('s' + s).padEnd(2 * 1024 * 1024, 'x') });
  const body = JSON.stringify({ messages: [
    { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read_file', arguments: args } }] },
    { role: 'tool', tool_call_id: 'c1', content: output(s) },
  ] });
  const { messages } = JSON.parse(body);
  await store.file('scope' + s, entriesToFile(messages, [1], tuning, 0));
}
// One first, so what the first call sets up once (compiled code, caches) is not counted.
await fileOne(-1);
gc();
const base = process.memoryUsage().heapUsed;
const before = store.chars;
for (let s = 0; s < 10; s++) await fileOne(s);
gc();
console.log(JSON.stringify({ chars: store.chars - before, scopes: store.size, retained: process.memoryUsage().heapUsed - base }));
`;

it('a filed entry keeps no more memory than the characters the store counts for it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ccr-retain-'));
  const script = join(dir, 'probe.mts');
  writeFileSync(script, PROBE);
  const out = await new Promise<string>((resolve, reject) =>
    execFile(
      process.execPath,
      ['--expose-gc', '--import', 'tsx', script],
      { timeout: 60_000 },
      (err, stdout) => (err ? reject(err) : resolve(stdout)),
    ),
  );
  const { chars, scopes, retained } = JSON.parse(out.trim().split('\n').at(-1)!) as {
    chars: number;
    scopes: number;
    retained: number;
  };
  expect(scopes).toBe(11);
  // 10 × ~1 MiB counted (the outputs, one byte a character); with the label or the keywords
  // left as views, 2 MiB of arguments or 1 MiB of joined text more stayed alive per entry.
  expect(chars).toBeGreaterThan(10 * 1000 * 1024);
  expect(chars).toBeLessThan(10 * 1040 * 1024);
  expect(retained).toBeLessThan(chars * 1.25);
}, 60_000);
