import type { Redis } from 'ioredis';
import { newId } from '../ids.ts';
import {
  RATE_WINDOW_MS,
  type RateDecision,
  type RateLimiter,
  type RateLimits,
  type RateTicket,
} from '../rate-limiter.ts';
import {
  hasLimits,
  toRateDecision,
  unlimitedDecision,
  wholeTokens,
  type WindowOutcome,
} from '../sliding-window.ts';
import { systemClock, type Clock, type KeyRef } from '../types.ts';
import type { KeySpace } from './keys.ts';
import { rateAcquire, rateAdjust } from './lua/rate-limit.ts';
import { arg, bindScript, int, type BoundScript } from './script.ts';

const member = (id: string, tokens: number) => `${id}:${tokens}`;

export class RedisRateLimiter implements RateLimiter {
  private readonly acquireScript: BoundScript;
  private readonly adjustScript: BoundScript;

  constructor(
    client: Redis,
    private readonly keys: KeySpace,
    private readonly clock: Clock = systemClock,
    private readonly windowMs = RATE_WINDOW_MS,
  ) {
    this.acquireScript = bindScript(client, rateAcquire, 'rateLimit.acquire');
    this.adjustScript = bindScript(client, rateAdjust, 'rateLimit.adjust');
  }

  async acquire(key: KeyRef, limits: RateLimits, tokenEstimate: number): Promise<RateDecision> {
    if (!hasLimits(limits)) return unlimitedDecision();
    const now = Math.floor(this.clock());
    const estimate = wholeTokens(tokenEstimate);
    const id = newId();
    const raw = await this.acquireScript(
      [this.keys.rateWindow(key), this.keys.rateTokens(key)],
      [
        arg(now),
        arg(this.windowMs),
        arg(limits.requestsPerMinute ?? 0),
        arg(limits.tokensPerMinute ?? 0),
        arg(estimate),
        id,
      ],
    );
    if (!Array.isArray(raw) || raw.length !== 7) throw new Error('rate limit script: unexpected reply');
    const newest = int(raw[6], 'newestAt');
    const outcome: WindowOutcome = {
      allowed: int(raw[0], 'allowed') === 1,
      count: int(raw[1], 'count'),
      tokens: int(raw[2], 'tokens'),
      requestsRetryMs: int(raw[3], 'requestsRetryMs'),
      tokensRetryMs: int(raw[4], 'tokensRetryMs'),
      tokensExceedLimit: int(raw[5], 'exceeds') === 1,
      newestAt: newest < 0 ? undefined : newest,
    };
    const ticket: RateTicket = { tenant: key.tenant, keyId: key.keyId, id, tokens: estimate };
    return toRateDecision(outcome, limits, now, this.windowMs, ticket);
  }

  async adjust(ticket: RateTicket, actualTokens: number): Promise<void> {
    const actual = wholeTokens(actualTokens);
    if (actual === ticket.tokens) return;
    await this.adjustScript(
      [this.keys.rateWindow(ticket), this.keys.rateTokens(ticket)],
      [
        member(ticket.id, ticket.tokens),
        member(ticket.id, actual),
        arg(actual - ticket.tokens),
        arg(this.windowMs),
      ],
    );
  }
}
