/**
 * Upstream attempt deadlines. A Node timer is cheap while other timers of the same duration
 * are pending (many concurrent requests), but at one connection each attempt's timer is the
 * only one of its duration: Node builds and tears down a timer list, its priority-queue entry
 * and the libuv timer on every request (about 2.7 us instead of 0.4 us, measured; 4 us of a
 * request's CPU in the one-connection profile, issue 15). Long limits (the request deadline,
 * provider timeouts of seconds to minutes) need no millisecond precision: they are checked
 * by one shared interval, which runs only while some attempt is armed and fires at most one
 * tick late. Short limits keep a precise timer of their own.
 */

/** Cancels an armed deadline; calling it again, or after it fired, does nothing. */
export type Disarm = () => void;

export interface DeadlineOptions {
  /** How often armed long deadlines are checked: the most a long deadline fires late. */
  tickMs: number;
  /** Limits at least this long go on the shared tick; shorter ones get a precise timer. */
  coarseFromMs: number;
  /** A monotonic clock (ms): a wall clock stepped by NTP would fire limits early or late. */
  now: () => number;
  /** Told of an `onExpire` that threw; the sweep goes on with the other due deadlines. */
  onError: (err: unknown) => void;
}

export const DEFAULT_DEADLINES: DeadlineOptions = {
  tickMs: 100,
  coarseFromMs: 5_000,
  now: () => performance.now(),
  // The router has no request logger here; a warning reaches stderr without ending the process.
  onError: (err) =>
    process.emitWarning(
      `attempt deadline handler threw: ${err instanceof Error ? err.message : String(err)}`,
      {
        code: 'GANTRY_DEADLINE',
      },
    ),
};

interface Armed {
  at: number;
  onExpire: () => void;
}

export class Deadlines {
  private readonly armed = new Set<Armed>();
  private ticker: NodeJS.Timeout | undefined;
  private readonly onTick = (): void => this.sweep();

  constructor(private readonly opts: DeadlineOptions = DEFAULT_DEADLINES) {}

  /** Calls `onExpire` once `ms` have passed, unless disarmed first. */
  arm(ms: number, onExpire: () => void): Disarm {
    if (ms < this.opts.coarseFromMs) {
      const timer = setTimeout(onExpire, ms);
      return () => clearTimeout(timer);
    }
    const entry: Armed = { at: this.opts.now() + ms, onExpire };
    this.armed.add(entry);
    if (!this.ticker) {
      this.ticker = setInterval(this.onTick, this.opts.tickMs);
      // An armed deadline never keeps the process alive: the call it guards does.
      this.ticker.unref();
    }
    return () => void this.armed.delete(entry);
  }

  /** Long deadlines armed and not yet fired or disarmed. */
  get pending(): number {
    return this.armed.size;
  }

  /** Whether the shared interval is running (it stops at the first tick with nothing armed). */
  get ticking(): boolean {
    return this.ticker !== undefined;
  }

  private sweep(): void {
    if (this.armed.size === 0) {
      clearInterval(this.ticker);
      this.ticker = undefined;
      return;
    }
    const now = this.opts.now();
    for (const entry of this.armed) {
      if (entry.at > now) continue;
      this.armed.delete(entry);
      // One handler's failure must not leave the later due attempts running past their limits.
      try {
        entry.onExpire();
      } catch (err) {
        this.opts.onError(err);
      }
    }
  }
}
