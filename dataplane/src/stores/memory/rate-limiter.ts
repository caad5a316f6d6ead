import { newId } from '../ids.ts';
import {
  RATE_WINDOW_MS,
  type RateDecision,
  type RateLimiter,
  type RateLimits,
  type RateTicket,
} from '../rate-limiter.ts';
import {
  decideWindow,
  hasLimits,
  isLive,
  toRateDecision,
  unlimitedDecision,
  wholeTokens,
} from '../sliding-window.ts';
import { systemClock, type Clock, type KeyRef } from '../types.ts';
import type { MemoryRateWindow, MemoryState } from './state.ts';

const mapKey = (k: KeyRef) => JSON.stringify([k.tenant, k.keyId]);

export class MemoryRateLimiter implements RateLimiter {
  constructor(
    private readonly mem: MemoryState,
    private readonly clock: Clock = systemClock,
    private readonly windowMs = RATE_WINDOW_MS,
  ) {}

  private prune(win: MemoryRateWindow, now: number): void {
    let drop = 0;
    while (drop < win.entries.length && !isLive(win.entries[drop]!.at, now, this.windowMs)) {
      const gone = win.entries[drop]!;
      win.tokens -= gone.tokens;
      win.byId.delete(gone.id);
      drop++;
    }
    if (drop > 0) win.entries.splice(0, drop);
    if (win.entries.length === 0) win.tokens = 0;
  }

  async acquire(key: KeyRef, limits: RateLimits, tokenEstimate: number): Promise<RateDecision> {
    if (!hasLimits(limits)) return unlimitedDecision();
    const now = Math.floor(this.clock());
    const estimate = wholeTokens(tokenEstimate);
    const k = mapKey(key);
    const win = this.mem.rateWindows.get(k) ?? { entries: [], byId: new Map(), tokens: 0 };
    this.prune(win, now);
    const outcome = decideWindow(win.entries, win.tokens, now, limits, estimate, this.windowMs);
    let ticket: RateTicket | undefined;
    if (outcome.allowed) {
      const id = newId();
      // Keep entries sorted even if the clock stepped back.
      let i = win.entries.length;
      while (i > 0 && win.entries[i - 1]!.at > now) i--;
      const entry = { id, at: now, tokens: estimate };
      win.entries.splice(i, 0, entry);
      win.byId.set(id, entry);
      win.tokens += estimate;
      ticket = { tenant: key.tenant, keyId: key.keyId, id, tokens: estimate };
    }
    if (win.entries.length > 0) this.mem.rateWindows.set(k, win);
    else this.mem.rateWindows.delete(k);
    return toRateDecision(outcome, limits, now, this.windowMs, ticket);
  }

  async adjust(ticket: RateTicket, actualTokens: number): Promise<void> {
    const win = this.mem.rateWindows.get(mapKey(ticket));
    if (!win) return;
    this.prune(win, Math.floor(this.clock()));
    const entry = win.byId.get(ticket.id);
    if (!entry || entry.tokens !== ticket.tokens) return;
    const actual = wholeTokens(actualTokens);
    win.tokens += actual - entry.tokens;
    entry.tokens = actual;
  }
}
