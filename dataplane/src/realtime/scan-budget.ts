/**
 * Characters of client text one API key's Realtime sessions may have scanned by the guardrails
 * per minute on this pod. Each scan is CPU on the gateway (about 45 ms a MiB), and events that
 * carry text but start no response meet no rate limit: before, five 2 MiB items cost 440 ms of
 * CPU on a key allowed one request a minute, and a run of refused events was reset by one cheap
 * forwarded event. Per key, not per session: a fresh allowance per session was had again by
 * closing and reopening (and ten times over with concurrent sessions).
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

  /** Its window has passed: it holds nothing a fresh budget would not, so it may be dropped. */
  idle(now: number): boolean {
    return now - this.windowStart >= this.windowMs;
  }
}

/** One key's share of `ScanBudgets`, looked up on each use (an idle entry may be dropped between). */
export interface KeyScanBudget {
  take(chars: number, now: number): boolean;
  retryAfterS(now: number): number;
}

/**
 * The scan budgets of the keys with sessions on this pod. An entry is dropped once its window
 * has passed (losing nothing), swept at most once a window, so the map holds only the keys that
 * scanned text in about the last two minutes.
 */
export class ScanBudgets {
  private readonly byKey = new Map<string, ScanBudget>();
  private lastSweep = -Infinity;

  constructor(
    private readonly maxChars: number,
    private readonly windowMs = 60_000,
  ) {}

  get size(): number {
    return this.byKey.size;
  }

  take(keyId: string, chars: number, now: number): boolean {
    this.sweep(now);
    let budget = this.byKey.get(keyId);
    if (!budget) this.byKey.set(keyId, (budget = new ScanBudget(this.maxChars, this.windowMs)));
    return budget.take(chars, now);
  }

  retryAfterS(keyId: string, now: number): number {
    return this.byKey.get(keyId)?.retryAfterS(now) ?? 1;
  }

  forKey(keyId: string): KeyScanBudget {
    return {
      take: (chars, now) => this.take(keyId, chars, now),
      retryAfterS: (now) => this.retryAfterS(keyId, now),
    };
  }

  private sweep(now: number): void {
    if (now - this.lastSweep < this.windowMs) return;
    this.lastSweep = now;
    for (const [key, budget] of this.byKey) if (budget.idle(now)) this.byKey.delete(key);
  }
}
