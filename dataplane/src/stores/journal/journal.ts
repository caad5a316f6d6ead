/**
 * Budget settlements the shared store could not take, kept on local disk until it takes them.
 * A request's charge is written here (and fsynced) before its answer completes, so an outage
 * of any length, or a gateway restart during one, loses no spend: the journal is replayed in
 * order when the store comes back (on its reconnect event, on a short timer, and at boot).
 * Replays are safe because the budget store applies a settlement once per reservation id.
 *
 * Nothing is written while the store is healthy; the file only exists during an outage and
 * is truncated once everything in it has been applied.
 *
 * The directory has one writer (lock.ts): open() refuses a directory another live process
 * holds, close() releases it (so does exit). A lock lost while open stops all file work and
 * replays here, fails later writes, and is reported through `onLockLost`.
 */
import { mkdir, open, readFile, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { isStoreUnavailable } from '../errors.ts';
import { doneLine, pendingSettlements, settleLine, type PendingSettlement } from './entries.ts';
import { lockJournalDir, type JournalLockOptions } from './lock.ts';

export const JOURNAL_FILE = 'settlements.jsonl';
export const DEFAULT_JOURNAL_RETRY_MS = 1000;

export interface JournalOptions {
  /** Directory of the journal file; one per gateway process (created on first use). */
  dir: string;
  /** Applies one settlement; throws StoreUnavailableError while the store is down. */
  apply: (s: PendingSettlement) => Promise<void>;
  /** Delay between replay attempts while settlements are pending (default 1 s). */
  retryMs?: number | undefined;
  /** A settlement the store refused for a reason other than being unreachable: it is dropped. */
  onDropped?: (s: PendingSettlement, err: unknown) => void;
  /** Called whenever the number of pending settlements changes. */
  onPending?: (pending: number) => void;
  /** Timing of the directory's lock (defaults suit production; tests shorten them). */
  lock?: JournalLockOptions | undefined;
  /**
   * The lock was lost while open (another process may own the directory now): the journal has
   * stopped writing and replaying. Without this the loss is thrown, as proper-lockfile does.
   */
  onLockLost?: (err: Error) => void;
}

export class SettlementJournal {
  private readonly queue: PendingSettlement[];
  private readonly path: string;
  private readonly retryMs: number;
  private file: FileHandle | undefined;
  /** File operations run one at a time, in call order. */
  private io: Promise<unknown> = Promise.resolve();
  private replaying: Promise<void> | undefined;
  private again = false;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  /** Why the directory's lock was lost, once it was. */
  private lost: Error | undefined;
  private release: (() => Promise<void>) | undefined;
  private emptyWaiters: (() => void)[] = [];
  /** The file has lines in it (so emptying the queue should truncate it). */
  private dirty: boolean;

  private constructor(
    private readonly opts: JournalOptions,
    pending: PendingSettlement[],
    dirty: boolean,
  ) {
    this.queue = pending;
    this.dirty = dirty;
    this.path = join(opts.dir, JOURNAL_FILE);
    this.retryMs = Math.max(1, opts.retryMs ?? DEFAULT_JOURNAL_RETRY_MS);
  }

  /** Reads what an earlier run left unapplied; call replay() to apply it. */
  static async open(opts: JournalOptions): Promise<SettlementJournal> {
    // A loss reported before the journal exists (while the file is read) is applied once it does.
    const made: { journal?: SettlementJournal; lostEarly?: Error } = {};
    const release = await lockJournalDir(opts.dir, opts.lock ?? {}, (err) => {
      if (made.journal) made.journal.lockLost(err);
      else made.lostEarly = err;
    });
    let text: string;
    try {
      text = await readFile(join(opts.dir, JOURNAL_FILE), 'utf8').catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return '';
        throw err;
      });
    } catch (err) {
      await release().catch(() => undefined);
      throw err;
    }
    const journal = new SettlementJournal(opts, pendingSettlements(text), text.length > 0);
    made.journal = journal;
    journal.release = release;
    journal.opts.onPending?.(journal.pending);
    if (made.lostEarly) journal.lockLost(made.lostEarly);
    return journal;
  }

  /** The directory this journal lives in (for the operator reading a shutdown log). */
  get dir(): string {
    return this.opts.dir;
  }

  get pending(): number {
    return this.queue.length;
  }

  /** What is still owed, in order (for a log line). */
  queued(): PendingSettlement[] {
    return [...this.queue];
  }

  /** Resolves once nothing is pending (at once when nothing is). */
  whenEmpty(): Promise<void> {
    if (this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.emptyWaiters.push(resolve));
  }

  /** Durably records a settlement; resolves once it is on disk. */
  async add(s: PendingSettlement): Promise<void> {
    if (this.lost) {
      // Not written (the files may be another process's now), but owed: kept in memory so
      // metered keys keep failing closed here and the shutdown logs it with what else is owed.
      this.queue.push(s);
      this.opts.onPending?.(this.queue.length);
      throw new Error(`settlement journal lock lost: ${this.lost.message}`);
    }
    if (this.closed) throw new Error('settlement journal is closed');
    this.queue.push(s);
    this.opts.onPending?.(this.queue.length);
    this.dirty = true;
    try {
      await this.serial(async (f) => {
        await f.write(settleLine(s));
        await f.datasync();
      });
    } finally {
      // Even when the disk failed, the settlement is pending in memory and will be replayed.
      this.schedule();
    }
  }

  /**
   * Applies pending settlements in order until one fails because the store is unreachable
   * (the rest wait for the next attempt). A call during a pass makes one more pass after it,
   * so a reconnect event is never lost to a pass that was about to fail.
   */
  replay(): Promise<void> {
    if (this.replaying) {
      this.again = true;
      return this.replaying;
    }
    this.replaying = (async () => {
      do {
        this.again = false;
        await this.pass();
      } while (this.again && this.queue.length > 0 && !this.closed);
    })().finally(() => {
      this.replaying = undefined;
      this.schedule();
    });
    return this.replaying;
  }

  /**
   * Shutdown's last chance to hand what is pending to the store: replays at once, then on every
   * reconnect and every retry interval, until nothing is pending or `withinMs` has passed.
   * Resolves with what is still owed (it stays in the file for the next process on this dir).
   */
  async drain(withinMs: number): Promise<PendingSettlement[]> {
    if (this.closed || this.queue.length === 0 || withinMs <= 0) return [...this.queue];
    void this.replay();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.whenEmpty(),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, withinMs);
      }),
    ]);
    clearTimeout(timer);
    return [...this.queue];
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.replaying;
    await this.io;
    await this.file?.close().catch(() => undefined);
    this.file = undefined;
    // After a loss the lock is no longer ours to remove (it may be another process's now).
    if (!this.lost) await this.release?.();
    this.release = undefined;
  }

  /**
   * Another process may be appending to, replaying or truncating these files now: stop all
   * file work and replays (what is on disk stays for the directory's holder; what is pending
   * stays in memory, so budgeted admissions keep failing closed and the owed sum is logged).
   */
  private lockLost(err: Error): void {
    if (this.lost || (this.closed && !this.release)) return;
    this.lost = err;
    this.closed = true;
    clearTimeout(this.timer);
    if (this.opts.onLockLost) this.opts.onLockLost(err);
    else throw err;
  }

  private async pass(): Promise<void> {
    while (this.queue.length > 0 && !this.closed) {
      const next = this.queue[0]!;
      try {
        await this.opts.apply(next);
      } catch (err) {
        if (isStoreUnavailable(err)) return;
        this.opts.onDropped?.(next, err);
      }
      this.queue.shift();
      this.opts.onPending?.(this.queue.length);
      const id = next.reservation.id;
      // A lost `done` line only means one more (idempotent) replay, so it is not fsynced.
      await this.serial((f) => f.write(doneLine(id))).catch(() => undefined);
    }
    if (this.queue.length === 0) await this.emptied();
  }

  private async emptied(): Promise<void> {
    if (this.dirty) {
      await this.serial(async (f) => {
        if (this.queue.length > 0) return;
        await f.truncate(0);
        this.dirty = false;
      }).catch(() => undefined);
    }
    if (this.queue.length > 0) return;
    const waiters = this.emptyWaiters;
    this.emptyWaiters = [];
    for (const w of waiters) w();
  }

  private schedule(): void {
    if (this.closed || this.timer || this.replaying || this.queue.length === 0) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.replay();
    }, this.retryMs);
    this.timer.unref();
  }

  private serial<T>(op: (f: FileHandle) => Promise<T>): Promise<T> {
    const run = this.io.then(async () => {
      if (this.lost) throw new Error(`settlement journal lock lost: ${this.lost.message}`);
      return op(await this.handle());
    });
    this.io = run.catch(() => undefined);
    return run;
  }

  private async handle(): Promise<FileHandle> {
    if (this.file) return this.file;
    await mkdir(this.opts.dir, { recursive: true });
    this.file = await open(this.path, 'a');
    return this.file;
  }
}
