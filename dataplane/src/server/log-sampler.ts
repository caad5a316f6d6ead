/**
 * Bounds how often one kind of event reaches the default log level. Events a client can
 * cause at will (malformed requests) would otherwise let it fill the log: the first event of
 * each interval is loud and says how many were quiet since the previous loud one.
 */
export class LogSampler {
  private nextLoudAt = Number.NEGATIVE_INFINITY;
  private quiet = 0;

  constructor(
    private readonly intervalMs: number,
    // Monotonic: a wall clock stepped back (NTP) would silence the loud events until it caught up.
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** For a loud event, how many quiet ones preceded it since the last loud one; else undefined. */
  take(): number | undefined {
    const t = this.now();
    if (t < this.nextLoudAt) {
      this.quiet += 1;
      return undefined;
    }
    this.nextLoudAt = t + this.intervalMs;
    const quiet = this.quiet;
    this.quiet = 0;
    return quiet;
  }
}
