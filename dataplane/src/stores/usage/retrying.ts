/**
 * Usage recording fails open: the request it describes has been answered (and charged by the
 * budget store) already, so an unreachable Redis must not fail it. Records that could not be
 * written wait in a bounded in-process queue and are retried in the background; records are
 * idempotent by request id, so a retry after a lost reply (the script ran, the answer did not
 * arrive) is not counted twice. Beyond the bound the oldest waiting records are dropped and
 * counted, so an outage costs memory only up to the bound.
 */
import type { UsageRecord, UsageStore } from '../../accounting/usage.ts';
import { isStoreUnavailable } from '../errors.ts';

export interface UsageRecorder {
  /** Never throws and never waits on the store. */
  record(r: UsageRecord): void;
  /** Writes what is waiting (tests, shutdown). Resolves when the queue is empty or the store failed again. */
  flush(): Promise<void>;
  /** Stops the retry timer after a last flush. */
  close(): Promise<void>;
  /** Records waiting to be written. */
  readonly pending: number;
  /** Records given up on: dropped from a full queue, or refused by the store for a reason a retry cannot fix. */
  readonly dropped: number;
}

export interface RetryingRecorderOptions {
  /** Records kept while the store is unreachable (default 50,000). */
  maxPending?: number;
  /** Delay between retries while the store is unreachable (default 1 s). */
  retryMs?: number;
  /** Sees every failure (log it; it never contains prompt text). */
  onError?: (err: unknown, r: UsageRecord) => void;
}

export class RetryingUsageRecorder implements UsageRecorder {
  private readonly queue: UsageRecord[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private droppedCount = 0;
  private readonly maxPending: number;
  private readonly retryMs: number;
  private closed = false;

  constructor(
    private readonly store: UsageStore,
    private readonly opts: RetryingRecorderOptions = {},
  ) {
    this.maxPending = Math.max(1, opts.maxPending ?? 50_000);
    this.retryMs = Math.max(1, opts.retryMs ?? 1000);
  }

  get pending(): number {
    return this.queue.length;
  }

  /** Records sent to the store and not answered yet (not in `pending`). */
  get writing(): number {
    return this.inFlight.size;
  }

  get dropped(): number {
    return this.droppedCount;
  }

  record(r: UsageRecord): void {
    // While records wait, new ones queue behind them: no point hammering a store that is down.
    if (this.queue.length > 0 || this.flushing) {
      this.enqueue(r);
      return;
    }
    const p = this.write(r).then((ok) => {
      if (!ok) this.enqueue(r);
    });
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
  }

  /** True when written (or a duplicate); false when it should be retried. */
  private async write(r: UsageRecord): Promise<boolean> {
    try {
      await this.store.record(r);
      return true;
    } catch (err) {
      this.opts.onError?.(err, r);
      if (isStoreUnavailable(err)) return false;
      this.droppedCount++;
      return true;
    }
  }

  private enqueue(r: UsageRecord): void {
    this.queue.push(r);
    if (this.queue.length > this.maxPending) {
      this.queue.splice(0, this.queue.length - this.maxPending);
      this.droppedCount++;
    }
    this.schedule();
  }

  private schedule(): void {
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, this.retryMs);
    this.timer.unref();
  }

  async flush(): Promise<void> {
    await Promise.all(this.inFlight);
    this.flushing ??= this.drain().finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const r = this.queue[0]!;
      if (!(await this.write(r))) {
        this.schedule();
        return;
      }
      // The queue may have been trimmed meanwhile; drop r only if it is still at the head.
      if (this.queue[0] === r) this.queue.shift();
    }
  }

  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
