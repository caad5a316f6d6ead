import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { until } from '../../../test/harness/until.ts';
import { DEFAULT_LINE_BATCH, LineBatch, type LineSink } from './log-lines.ts';

/** Records what reaches the sink, and when it was asked to flush. */
class RecordingSink implements LineSink {
  readonly writes: string[] = [];
  flushes = 0;
  write(chunk: string): boolean {
    this.writes.push(chunk);
    return true;
  }
  flushSync(): void {
    this.flushes++;
  }
}

const line = (i: number) => `{"msg":"request completed","n":${i}}\n`;

describe('LineBatch', () => {
  const dirs: string[] = [];
  afterEach(async () => {
    for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
  });

  it('hands lines on together, once per flush interval, in order', async () => {
    const sink = new RecordingSink();
    const batch = new LineBatch(sink, { flushMs: 20, maxChars: 1 << 20, writeSync: () => undefined });
    for (let i = 0; i < 5; i++) batch.write(line(i));
    expect(sink.writes).toEqual([]);
    await until(
      'the batch to be handed on',
      async () => (sink.writes.length > 0 ? true : undefined),
      2000,
      5,
    );
    expect(sink.writes).toEqual([[0, 1, 2, 3, 4].map(line).join('')]);
  });

  it('hands a batch on at once when it reaches maxChars', () => {
    const sink = new RecordingSink();
    const batch = new LineBatch(sink, { flushMs: 60_000, maxChars: 100, writeSync: () => undefined });
    batch.write('a'.repeat(60));
    expect(sink.writes).toEqual([]);
    batch.write('b'.repeat(60));
    expect(sink.writes).toEqual(['a'.repeat(60) + 'b'.repeat(60)]);
    batch.flush();
    expect(sink.writes).toHaveLength(1);
  });

  it('flushSync drains the sink first, then writes what is pending directly', () => {
    const sink = new RecordingSink();
    const direct: string[] = [];
    const batch = new LineBatch(sink, {
      flushMs: 60_000,
      maxChars: 1 << 20,
      writeSync: (c) => direct.push(c),
    });
    batch.write(line(1));
    batch.flushSync();
    expect(sink.flushes).toBe(1);
    expect(direct).toEqual([line(1)]);
    batch.flushSync();
    expect(direct).toHaveLength(1);
  });

  it('still writes what is pending when the sink was already closed', () => {
    const direct: string[] = [];
    const closed: LineSink = {
      write: () => true,
      flushSync: () => {
        throw new Error('SonicBoom destroyed');
      },
    };
    const batch = new LineBatch(closed, {
      flushMs: 60_000,
      maxChars: 1 << 20,
      writeSync: (c) => direct.push(c),
    });
    batch.write(line(2));
    batch.flushSync();
    expect(direct).toEqual([line(2)]);
  });

  it('through pino and an asynchronous SonicBoom, every line reaches the file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gantry-log-lines-'));
    dirs.push(dir);
    const file = join(dir, 'log');
    const sink = pino.destination({ dest: file, sync: false, mkdir: true });
    await new Promise((r) => sink.once('ready', r));
    const log = pino(
      { base: undefined, timestamp: false },
      new LineBatch(sink, { ...DEFAULT_LINE_BATCH, writeSync: () => undefined }),
    );
    for (let i = 0; i < 300; i++) log.info({ n: i }, 'request completed');
    const lines = await until(
      'all 300 lines in the file',
      async () => {
        const text = await readFile(file, 'utf8');
        const got = text.split('\n').filter(Boolean);
        return got.length === 300 ? got : undefined;
      },
      5000,
      10,
    );
    expect(lines.map((l) => (JSON.parse(l) as { n: number }).n)).toEqual([...Array(300).keys()]);
  });

  it('a process that exits right after logging still writes every line (exit hook)', async () => {
    const script = fileURLToPath(new URL('./log-lines.exit-fixture.ts', import.meta.url));
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, ['--import', 'tsx', script], { timeout: 20_000 }, (err, out) =>
        err ? reject(err) : resolve(out),
      ),
    );
    const lines = stdout.split('\n').filter(Boolean);
    expect(lines).toHaveLength(50);
    expect((JSON.parse(lines[49]!) as { n: number }).n).toBe(49);
  });
});
