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

/** One acquire as script keys and arguments, and how its reply becomes a decision. */
export interface AcquireCall {
  keys: string[];
  args: string[];
  decide(raw: unknown): RateDecision;
}

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
    const call = this.acquireCall(key, limits, tokenEstimate);
    return call.decide(await this.acquireScript(call.keys, call.args));
  }

  /** The acquire script's keys and arguments (ARGV[5] is the estimate, ARGV[6] the ticket id). */
  acquireCall(
    key: KeyRef,
    limits: RateLimits,
    tokenEstimate: number,
    now = Math.floor(this.clock()),
  ): AcquireCall {
    const estimate = wholeTokens(tokenEstimate);
    const id = newId();
    return {
      keys: [this.keys.rateWindow(key), this.keys.rateTokens(key)],
      args: [
        arg(now),
        arg(this.windowMs),
        arg(limits.requestsPerMinute ?? 0),
        arg(limits.tokensPerMinute ?? 0),
        arg(estimate),
        id,
      ],
      decide: (raw) => this.decide(raw, key, limits, now, estimate, id),
    };
  }

  private decide(
    raw: unknown,
    key: KeyRef,
    limits: RateLimits,
    now: number,
    estimate: number,
    id: string,
  ): RateDecision {
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
    const call = this.adjustCall(ticket, actualTokens);
    if (call) await this.adjustScript(call.keys, call.args);
  }

  /** The adjust script's keys and arguments; undefined when the estimate was exact (nothing to do). */
  adjustCall(ticket: RateTicket, actualTokens: number): { keys: string[]; args: string[] } | undefined {
    const actual = wholeTokens(actualTokens);
    if (actual === ticket.tokens) return undefined;
    return {
      keys: [this.keys.rateWindow(ticket), this.keys.rateTokens(ticket)],
      args: [
        member(ticket.id, ticket.tokens),
        member(ticket.id, actual),
        arg(actual - ticket.tokens),
        arg(this.windowMs),
      ],
    };
  }
}
