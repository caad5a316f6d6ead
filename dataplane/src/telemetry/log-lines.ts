/**
 * Request log lines gathered in memory and handed to the writer in batches: one write per
 * `flushMs` (or per `maxChars`), instead of one per request. Each asynchronous write is a
 * hand-off to libuv's thread pool and back; per request line that was the largest single
 * cost of a request at one connection (a fifth of the gateway's busy samples). A line waits
 * at most `flushMs`; no timer runs while nothing is pending, so an idle gateway stays idle.
 */

/** The writer behind the batches (pino's asynchronous SonicBoom in production). */
export interface LineSink {
  write(chunk: string): unknown;
  /** Writes what the sink still holds, synchronously (exit paths). */
  flushSync(): void;
}

export interface LineBatchOptions {
  /** Longest a line waits before it is handed on. */
  flushMs: number;
  /** A batch this long (UTF-16 units) is handed on at once. */
  maxChars: number;
  /** Writes directly and synchronously, for what is pending at exit. */
  writeSync: (chunk: string) => void;
}

export const DEFAULT_LINE_BATCH = { flushMs: 50, maxChars: 16_384 } as const;

export class LineBatch {
  private pending = '';
  private timer: NodeJS.Timeout | undefined;
  private readonly onTimer = (): void => this.handOff();

  constructor(
    private readonly sink: LineSink,
    private readonly opts: LineBatchOptions,
  ) {}

  /** pino's destination contract: one serialized line per call. */
  write(line: string): boolean {
    this.pending += line;
    if (this.pending.length >= this.opts.maxChars) this.handOff();
    else if (!this.timer) {
      this.timer = setTimeout(this.onTimer, this.opts.flushMs);
      // A pending line never keeps the process alive: exit paths call flushSync.
      this.timer.unref();
    }
    return true;
  }

  /** Hands what is pending to the sink now (asynchronous write). */
  flush(): void {
    this.handOff();
  }

  /**
   * Exit and shutdown: the sink's queue first, then what is pending here, both synchronously,
   * so nothing is left for an event loop that will not run again.
   */
  flushSync(): void {
    this.clearTimer();
    try {
      this.sink.flushSync();
    } catch {
      // A sink pino already ended at beforeExit holds nothing; what is pending here still goes out.
    }
    if (!this.pending) return;
    const rest = this.pending;
    this.pending = '';
    this.opts.writeSync(rest);
  }

  private handOff(): void {
    this.clearTimer();
    if (!this.pending) return;
    const batch = this.pending;
    this.pending = '';
    this.sink.write(batch);
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
