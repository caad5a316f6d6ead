/**
 * Settlements written to the stores whose acknowledgement the answer did not wait for. The
 * gateway's shutdown waits for them (`idle`) before it closes the recorder, the journal and the
 * stores, so a drained request's charge and record are never cut off.
 */
export class SettlementsInFlight {
  /** Each job with the dollars it settles, for the shutdown's log when a store hangs. */
  private readonly pending = new Map<Promise<unknown>, number | (() => number)>();
  private waiters: (() => void)[] = [];

  /** `onError` hears a job that rejected anyway: nobody awaits it, so it would go unseen. */
  constructor(private readonly onError: (err: unknown) => void = () => undefined) {}

  get size(): number {
    return this.pending.size;
  }

  /** Dollars the jobs still in flight settle. */
  get owedUsd(): number {
    let sum = 0;
    for (const usd of this.pending.values()) sum += typeof usd === 'number' ? usd : usd();
    return sum;
  }

  /**
   * `work` should not reject: a settlement's failures are handled inside it (journal, retries).
   * `owedUsd` is a function for work whose amount changes while it runs (a Realtime session).
   */
  track(work: Promise<unknown>, owedUsd: number | (() => number) = 0): void {
    this.pending.set(work, owedUsd);
    const done = (): void => {
      this.pending.delete(work);
      if (this.pending.size > 0) return;
      const waiters = this.waiters;
      this.waiters = [];
      for (const w of waiters) w();
    };
    work.then(done, (err: unknown) => {
      this.onError(err);
      done();
    });
  }

  /** Resolves once nothing is in flight (at once when nothing is). */
  idle(): Promise<void> {
    if (this.pending.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }
}
