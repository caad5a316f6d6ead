/**
 * One writer per journal directory. Two processes appending to, replaying and truncating the
 * same files charge twice (a replay after the store forgot a settled id) and drop each other's
 * lines, so the directory is locked with proper-lockfile: an atomic mkdir (safe on network
 * volumes, unlike flock), an mtime the holder refreshes, and a lock whose mtime stopped moving
 * for the stale period (its holder died) is taken over. Who holds it is recorded next to the
 * lock so a refused start can name it.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import lockfile from 'proper-lockfile';

/** The lock itself: a directory inside the journal directory, so it lives on the same volume. */
export const LOCK_NAME = 'journal.lock';
/** Who took the lock last (best effort: read only to name the holder in a refusal). */
export const HOLDER_FILE = 'journal.lock.holder.json';
/** proper-lockfile's default; its floor is 2 s (and 1 s for the refresh interval). */
export const DEFAULT_LOCK_STALE_MS = 10_000;

export interface JournalLockOptions {
  /** A lock not refreshed for this long belongs to a dead process and is taken over (default 10 s). */
  staleMs?: number | undefined;
  /** How often the holder refreshes the lock (default staleMs / 2). */
  updateMs?: number | undefined;
  /**
   * How long a start waits for a held lock before refusing (default staleMs + 1 s: long enough
   * for the lock of a holder that died just before to go stale and be taken over).
   */
  waitMs?: number | undefined;
}

export interface LockHolder {
  pid: number;
  host: string;
  since: string;
}

export class JournalLockedError extends Error {
  constructor(
    readonly dir: string,
    readonly holder: LockHolder | undefined,
    waitedMs: number,
  ) {
    const who = holder ? `pid ${holder.pid} on ${holder.host}, since ${holder.since}` : 'holder unknown';
    super(
      `settlement journal directory ${dir} is locked by another gateway (${who}); waited ${waitedMs} ms. ` +
        'A journal has one writer: give each gateway its own --journal-dir, or stop the other one ' +
        '(a lock left by a process that died is taken over once it goes stale).',
    );
    this.name = 'JournalLockedError';
  }
}

/** How often a start looks at a held lock again while it waits. */
const RETRY_EVERY_MS = 250;

/** proper-lockfile's settings for these options (its floors applied, so the numbers are real). */
export function lockSettings(opts: JournalLockOptions): {
  staleMs: number;
  updateMs: number;
  waitMs: number;
  retries: number;
} {
  const staleMs = Math.max(opts.staleMs ?? DEFAULT_LOCK_STALE_MS, 2000);
  const updateMs = Math.max(Math.min(opts.updateMs ?? staleMs / 2, staleMs / 2), 1000);
  const waitMs = Math.max(0, opts.waitMs ?? staleMs + 1000);
  return { staleMs, updateMs, waitMs, retries: Math.ceil(waitMs / RETRY_EVERY_MS) };
}

/**
 * Takes the directory's lock (creating the directory), waiting up to `waitMs` for a holder to
 * release it or go stale. `onLost` is called if the lock is lost while held (its refresh failed
 * for the stale period, or another process removed it). Resolves with the release function.
 */
export async function lockJournalDir(
  dir: string,
  opts: JournalLockOptions,
  onLost: (err: Error) => void,
): Promise<() => Promise<void>> {
  await mkdir(dir, { recursive: true });
  const { staleMs, updateMs, waitMs, retries } = lockSettings(opts);
  let release: () => Promise<void>;
  try {
    release = await lockfile.lock(dir, {
      lockfilePath: join(dir, LOCK_NAME),
      stale: staleMs,
      update: updateMs,
      retries: { retries, factor: 1, minTimeout: RETRY_EVERY_MS, maxTimeout: RETRY_EVERY_MS },
      onCompromised: onLost,
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ELOCKED') throw err;
    throw new JournalLockedError(dir, await readHolder(dir), waitMs);
  }
  const holder: LockHolder = { pid: process.pid, host: hostname(), since: new Date().toISOString() };
  await writeFile(join(dir, HOLDER_FILE), JSON.stringify(holder)).catch(() => undefined);
  return release;
}

async function readHolder(dir: string): Promise<LockHolder | undefined> {
  try {
    return JSON.parse(await readFile(join(dir, HOLDER_FILE), 'utf8')) as LockHolder;
  } catch {
    return undefined;
  }
}
