/**
 * A de-duplicating, rate-limited work queue in the controller-runtime manner: events only
 * add keys; a key waiting is never queued twice; a key being processed that is added again
 * runs once more afterwards; a failed key comes back after a per-key exponential backoff.
 */
export interface QueueOptions {
  baseDelayMs: number;
  maxDelayMs: number;
  setTimer?: (fn: () => void, ms: number) => { unref?: () => void };
}

export class WorkQueue {
  private readonly waiting = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly wakers: (() => void)[] = [];
  private shut = false;

  constructor(private readonly opts: QueueOptions = { baseDelayMs: 200, maxDelayMs: 60_000 }) {}

  add(key: string): void {
    if (this.shut) return;
    if (this.processing.has(key)) {
      this.dirty.add(key);
      return;
    }
    if (this.waiting.has(key)) return;
    this.waiting.add(key);
    this.wakers.shift()?.();
  }

  /** Next key to process, or undefined once the queue is shut down. */
  async take(): Promise<string | undefined> {
    for (;;) {
      if (this.shut) return undefined;
      const next = this.waiting.values().next();
      if (!next.done) {
        this.waiting.delete(next.value);
        this.processing.add(next.value);
        return next.value;
      }
      await new Promise<void>((resolve) => this.wakers.push(resolve));
    }
  }

  /** Processing ended; `failed` schedules a retry after the key's backoff. */
  done(key: string, failed = false): void {
    this.processing.delete(key);
    if (failed) {
      const n = (this.failures.get(key) ?? 0) + 1;
      this.failures.set(key, n);
      const timer = (this.opts.setTimer ?? setTimeout)(() => this.add(key), this.backoff(n));
      timer.unref?.();
    } else this.failures.delete(key);
    if (this.dirty.delete(key)) this.add(key);
  }

  backoff(failures: number): number {
    return Math.min(this.opts.maxDelayMs, this.opts.baseDelayMs * 2 ** Math.max(0, failures - 1));
  }

  get length(): number {
    return this.waiting.size;
  }

  shutDown(): void {
    this.shut = true;
    for (const w of this.wakers.splice(0)) w();
  }
}
