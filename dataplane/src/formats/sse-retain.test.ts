/**
 * What an open SSE event keeps alive, measured. V8 keeps a slice of a string as a view of the
 * whole parent, so an event's data lines cut from reads padded with comments kept every read
 * they came in while the event stayed open: the 16 MiB bound on the event's data bounded
 * nothing (4,000 reads of a 16-byte line and a 64 KiB comment held 262 MB). Measured in a
 * child process started with --expose-gc, so the heap is collected before it is read.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect, it } from 'vitest';

const READS = 4000;
const PAD = 64 * 1024;

// Each read is a fresh string, as the decoder gives: one data line, then a comment line of
// 64 KiB, ended by LF or by a lone CR (the parser's two ways of splitting lines). The event
// is never ended, so every data line is kept; `data` is the bytes of data kept.
const PROBE = `
import { SseParser } from '${pathToFileURL(join(import.meta.dirname, 'sse.ts')).href}';
const gc = globalThis.gc;
const result = {};
for (const eol of ['\\n', '\\r']) {
  const p = new SseParser();
  p.push('data: warm-up' + eol);
  gc();
  const base = process.memoryUsage().heapUsed;
  let data = 0;
  for (let i = 0; i < ${READS}; i++) {
    const line = String(i).padStart(16, '0');
    data += line.length + 1;
    if (p.push('data: ' + line + eol + ':' + 'c'.repeat(${PAD}) + i + eol).length > 0) throw new Error('dispatched');
  }
  gc();
  result[eol === '\\n' ? 'lf' : 'cr'] = { data, retained: process.memoryUsage().heapUsed - base };
  // The parser is still alive here, and its event whole.
  const [event] = p.push(eol);
  if (event.data.split('\\n').length !== ${READS + 1}) throw new Error('lines lost');
}
console.log(JSON.stringify(result));
`;

it('an open event keeps its data lines, not the reads they came in', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sse-retain-'));
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
  const result = JSON.parse(out.trim().split('\n').at(-1)!) as Record<
    'lf' | 'cr',
    { data: number; retained: number }
  >;
  for (const { data, retained } of Object.values(result)) {
    expect(data).toBe(READS * 17);
    // A string and an array slot per line cost some tens of bytes beside its 17; as views,
    // each line kept its 64 KiB read (262 MB).
    expect(retained).toBeLessThan(1024 * 1024);
  }
}, 60_000);
