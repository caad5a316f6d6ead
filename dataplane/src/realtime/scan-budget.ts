/**
 * Characters of client text one session may have scanned by the guardrails per minute. Each
 * scan is CPU on the gateway (about 45 ms a MiB), and events that carry text but start no
 * response meet no rate limit: before, five 2 MiB items cost 440 ms of CPU on a key allowed
 * one request a minute, and a run of refused events was reset by one cheap forwarded event.
 * A fixed window per session; the sessions per key are capped (`maxSessionsPerKey`).
 */
export class ScanBudget {
  private windowStart = -Infinity;
  private used = 0;

  constructor(
    private readonly maxChars: number,
    private readonly windowMs = 60_000,
  ) {}

  /** Takes `chars` from this window; false (nothing taken) when they do not fit. */
  take(chars: number, now: number): boolean {
    if (now - this.windowStart >= this.windowMs) {
      this.windowStart = now;
      this.used = 0;
    }
    if (this.used + chars > this.maxChars) return false;
    this.used += chars;
    return true;
  }

  /** Whole seconds until the window turns. */
  retryAfterS(now: number): number {
    return Math.max(1, Math.ceil((this.windowStart + this.windowMs - now) / 1000));
  }
}
