/**
 * One writer per journal directory, on the real filesystem: a second journal (in this process
 * or another) is refused while the first holds the directory and opens once it is closed; a
 * lock left by a SIGKILLed process is taken over once it goes stale; a lock lost while open
 * stops the journal's writes. Staleness uses proper-lockfile's smallest periods (2 s stale,
 * 1 s refresh); waits are on conditions (a child's output, its exit, the lock's own retries).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, rmdir, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { until } from '../../../../test/harness/until.ts';
import type { PendingSettlement } from './entries.ts';
import { JOURNAL_FILE, SettlementJournal } from './journal.ts';
import { JournalLockedError, LOCK_NAME, lockSettings } from './lock.ts';

const FIXTURE = fileURLToPath(new URL('./lock-holder.fixture.ts', import.meta.url));
/** proper-lockfile's floors: the quickest a dead holder's lock goes stale. */
const FAST = { staleMs: 2000, updateMs: 1000 };

let dir: string;
const open: SettlementJournal[] = [];
const children: ChildProcess[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gantry-journal-lock-'));
});
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await Promise.all(open.splice(0).map((j) => j.close().catch(() => undefined)));
  await rm(dir, { recursive: true, force: true });
});

async function openJournal(
  lock: { staleMs?: number; updateMs?: number; waitMs?: number },
  onLockLost?: (err: Error) => void,
): Promise<SettlementJournal> {
  const j = await SettlementJournal.open({ dir, apply: async () => undefined, lock, onLockLost });
  open.push(j);
  return j;
}

/** Starts a process holding the journal on `dir`; resolves with it once it holds the lock. */
async function holderProcess(): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE, dir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`holder exited (${code}) before locking: ${err}`)));
  });
  expect(out).toBe(`locked ${child.pid}\n`);
  return child;
}

const entry = (id: string): PendingSettlement => ({
  reservation: {
    tenant: 't',
    keyId: 'k',
    id,
    periodKey: 'm2026-11',
    limitUsd: 5,
    amountUsd: 2,
    expiresAt: 0,
    periodRetentionMs: undefined,
  },
  amountUsd: 1,
  at: 1,
});

describe('journal directory lock', () => {
  it('defaults: 10 s stale, refreshed every 5 s, a start waits 11 s (a dead holder goes stale within it)', () => {
    expect(lockSettings({})).toEqual({ staleMs: 10_000, updateMs: 5000, waitMs: 11_000, retries: 44 });
    // proper-lockfile's floors, so tests' small numbers are the ones in force.
    expect(lockSettings({ staleMs: 1, updateMs: 1, waitMs: 0 })).toMatchObject({
      staleMs: 2000,
      updateMs: 1000,
      retries: 0,
    });
  });

  it('refuses a second journal on a held directory, naming it and the holder; opens once the first closes', async () => {
    const first = await openJournal(FAST);
    const refused = await openJournal({ ...FAST, waitMs: 0 }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(JournalLockedError);
    expect((refused as Error).message).toContain(dir);
    expect((refused as Error).message).toContain(`pid ${process.pid}`);
    await first.close();
    const second = await openJournal({ ...FAST, waitMs: 0 });
    expect(second.pending).toBe(0);
  });

  it('refuses a directory another live process holds, even past the stale period (it refreshes the lock)', async () => {
    const child = await holderProcess();
    const refused = await openJournal({ ...FAST, waitMs: 0 }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(JournalLockedError);
    expect((refused as Error).message).toContain(`pid ${child.pid}`);
    // Wait until the holder has refreshed the lock beyond a stale period after it was taken.
    const lock = join(dir, LOCK_NAME);
    const first = (await stat(lock)).mtimeMs;
    await until(
      'the holder to refresh its lock past the stale period',
      async () => ((await stat(lock)).mtimeMs >= first + FAST.staleMs ? true : undefined),
      15_000,
      100,
    );
    await expect(openJournal({ ...FAST, waitMs: 0 })).rejects.toBeInstanceOf(JournalLockedError);
  });

  it('takes over the stale lock of a SIGKILLed holder within its wait', async () => {
    const child = await holderProcess();
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    await stat(join(dir, LOCK_NAME)); // SIGKILL ran no exit hook: its lock is still there
    // Nobody refreshes the lock now: it goes stale after 2 s, well inside a 10 s wait.
    const j = await openJournal({ ...FAST, waitMs: 10_000 });
    await j.add(entry('after-takeover'));
    expect(await readFile(join(dir, JOURNAL_FILE), 'utf8')).toContain('after-takeover');
    const holder = JSON.parse(await readFile(join(dir, 'journal.lock.holder.json'), 'utf8')) as {
      pid: number;
    };
    expect(holder.pid).toBe(process.pid);
  });

  it('a lock lost while open stops the journal writing, and its close leaves the new holder alone', async () => {
    let lost!: (err: Error) => void;
    const lostErr = new Promise<Error>((resolve) => (lost = resolve));
    const j = await openJournal(FAST, (err) => lost(err));
    await rmdir(join(dir, LOCK_NAME)); // as if another process had taken the directory over
    expect((await lostErr).message).toMatch(/ENOENT|compromised|stale/i);
    await expect(j.add(entry('after-loss'))).rejects.toThrow(/lock lost/);
    expect(j.queued().map((s) => s.reservation.id)).toEqual(['after-loss']); // owed, in memory
    const taker = await openJournal({ ...FAST, waitMs: 0 });
    await j.close();
    await expect(openJournal({ ...FAST, waitMs: 0 })).rejects.toBeInstanceOf(JournalLockedError);
    await taker.add(entry('by-taker'));
    const text = await readFile(join(dir, JOURNAL_FILE), 'utf8');
    expect(text).toContain('by-taker');
    expect(text).not.toContain('after-loss');
  });
});
