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

/** Expired entries are cut off the front at most this often (and only once they are half the array). */
const COMPACT_AFTER = 1024;

export class MemoryRateLimiter implements RateLimiter {
  constructor(
    private readonly mem: MemoryState,
    private readonly clock: Clock = systemClock,
    private readonly windowMs = RATE_WINDOW_MS,
  ) {}

  private prune(win: MemoryRateWindow, now: number): void {
    const entries = win.entries;
    let head = win.head;
    while (head < entries.length && !isLive(entries[head]!.at, now, this.windowMs)) {
      const gone = entries[head]!;
      win.tokens -= gone.tokens;
      win.byId.delete(gone.id);
      head++;
    }
    if (head === entries.length) {
      entries.length = 0;
      head = 0;
      win.tokens = 0;
    } else if (head > COMPACT_AFTER && head * 2 > entries.length) {
      entries.splice(0, head);
      head = 0;
    }
    win.head = head;
  }

  async acquire(key: KeyRef, limits: RateLimits, tokenEstimate: number): Promise<RateDecision> {
    if (!hasLimits(limits)) return unlimitedDecision();
    const now = Math.floor(this.clock());
    const estimate = wholeTokens(tokenEstimate);
    const k = mapKey(key);
    const win: MemoryRateWindow = this.mem.rateWindows.get(k) ?? {
      entries: [],
      head: 0,
      byId: new Map(),
      tokens: 0,
    };
    this.prune(win, now);
    const outcome = decideWindow(win.entries, win.tokens, now, limits, estimate, this.windowMs, win.head);
    let ticket: RateTicket | undefined;
    if (outcome.allowed) {
      const id = newId();
      // Keep entries sorted even if the clock stepped back.
      let i = win.entries.length;
      while (i > win.head && win.entries[i - 1]!.at > now) i--;
      const entry = { id, at: now, tokens: estimate };
      if (i === win.entries.length) win.entries.push(entry);
      else win.entries.splice(i, 0, entry);
      win.byId.set(id, entry);
      win.tokens += estimate;
      ticket = { tenant: key.tenant, keyId: key.keyId, id, tokens: estimate };
    }
    if (win.entries.length > win.head) this.mem.rateWindows.set(k, win);
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
