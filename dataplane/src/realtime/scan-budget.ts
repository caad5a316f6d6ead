/**
 * Characters of client text the guardrails scan per minute for each API key's Realtime sessions
 * on this pod, and for each holder among them (scan-share.ts has the rule). Each scan is CPU on
 * the gateway (about 45 ms a Mi characters of benign text, up to ~1 s a Mi of hostile
 * shapes: the bench's worst), and events that carry text but start no response meet no rate
 * limit: before, five 2 MiB items cost 440 ms of CPU on a key allowed one request a minute.
 * The key's total is the CPU bound: a fresh allowance per session was had again by closing and
 * reopening. The holder's share is fairness: with the key's total alone, one client secret's
 * holder (an untrusted browser user) spent it all and every other user of the key was refused.
 */
import { judgeScan, type ScanAllowance, type ScanVerdict } from './scan-share.ts';

/** One key's fixed window: what it and each of its holders took in it. */
interface KeyWindow {
  start: number;
  used: number;
  byHolder: Map<string, number>;
}

export interface ScanTake {
  verdict: ScanVerdict;
  /** The holder's characters this window before this event (nothing is taken unless `ok`). */
  holderUsed: number;
  shareChars: number;
  /** Whole seconds until the window turns. */
  retryAfterS: number;
}

/** One holder's view of `ScanBudgets`, looked up on each use (an idle key may be dropped between). */
export interface HolderScanBudget {
  take(chars: number, now: number): ScanTake;
}

/**
 * The scan windows of the keys with sessions on this pod. A key's entry (and its holders') is
 * dropped once its window has passed (losing nothing), swept at most once a window, so the map
 * holds only the keys that scanned text in about the last two minutes, and each only the holders
 * that scanned in its current window.
 */
export class ScanBudgets {
  private readonly byKey = new Map<string, KeyWindow>();
  private lastSweep = -Infinity;

  constructor(
    readonly allowance: ScanAllowance,
    private readonly windowMs = 60_000,
  ) {}

  get size(): number {
    return this.byKey.size;
  }

  /** Takes `chars` for `holder` of `keyId` when the rule allows; nothing is taken otherwise. */
  take(keyId: string, holder: string, chars: number, now: number): ScanTake {
    this.sweep(now);
    let w = this.byKey.get(keyId);
    if (!w || now - w.start >= this.windowMs)
      this.byKey.set(keyId, (w = { start: now, used: 0, byHolder: new Map() }));
    const holderUsed = w.byHolder.get(holder) ?? 0;
    const verdict = judgeScan(this.allowance, { keyUsed: w.used, holderUsed }, chars);
    if (verdict === 'ok') {
      w.used += chars;
      w.byHolder.set(holder, holderUsed + chars);
    }
    const retryAfterS = Math.max(1, Math.ceil((w.start + this.windowMs - now) / 1000));
    return { verdict, holderUsed, shareChars: this.allowance.shareChars, retryAfterS };
  }

  forHolder(keyId: string, holder: string): HolderScanBudget {
    return { take: (chars, now) => this.take(keyId, holder, chars, now) };
  }

  private sweep(now: number): void {
    if (now - this.lastSweep < this.windowMs) return;
    this.lastSweep = now;
    for (const [key, w] of this.byKey) if (now - w.start >= this.windowMs) this.byKey.delete(key);
  }
}
