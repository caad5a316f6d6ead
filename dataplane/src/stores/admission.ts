/**
 * A key with both a rate limit and a budget is admitted in one step: count the request in the
 * rate window, then hold the estimate on the budget; a budget refusal gives the counted tokens
 * back (the request itself stays counted, as a refused attempt). With Redis the step is one
 * script, so one round trip instead of two or three; in process it is the same calls in order.
 */
import type { RateDecision, RateLimiter, RateLimits } from './rate-limiter.ts';
import type { BudgetStore, ReserveRequest, ReserveResult } from './budget.ts';
import type { KeyRef } from './types.ts';

export interface AdmitResult {
  decision: RateDecision;
  /** Undefined when the rate limit refused (nothing was asked of the budget). */
  reserve: ReserveResult | undefined;
}

/**
 * Which store failed, for the 503 the caller sees; and, when the budget store failed after the
 * rate limit admitted, that decision, so the 503 still carries the rate-limit headers.
 */
export class AdmissionStoreError extends Error {
  constructor(
    readonly store: 'rate limiter' | 'budget store',
    override readonly cause: unknown,
    readonly decision?: RateDecision,
  ) {
    super(`${store}: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'AdmissionStoreError';
  }
}

export interface Admitter {
  /**
   * Rate limit, then budget. A budget refusal (or failure) leaves no tokens counted for the
   * request; a rate refusal leaves the budget untouched. Throws AdmissionStoreError.
   */
  admit(
    key: KeyRef,
    limits: RateLimits,
    tokenEstimate: number,
    reserve: ReserveRequest,
  ): Promise<AdmitResult>;
}

/** The in-process stores: the two calls in turn (nothing to save, no round trips). */
export class SequentialAdmitter implements Admitter {
  constructor(
    private readonly rateLimiter: RateLimiter,
    private readonly budgets: BudgetStore,
  ) {}

  async admit(
    key: KeyRef,
    limits: RateLimits,
    tokenEstimate: number,
    reserve: ReserveRequest,
  ): Promise<AdmitResult> {
    let decision: RateDecision;
    try {
      decision = await this.rateLimiter.acquire(key, limits, tokenEstimate);
    } catch (err) {
      throw new AdmissionStoreError('rate limiter', err);
    }
    if (!decision.allowed) return { decision, reserve: undefined };
    let result: ReserveResult;
    try {
      result = await this.budgets.reserve(reserve);
    } catch (err) {
      await this.giveBack(decision);
      throw new AdmissionStoreError('budget store', err, decision);
    }
    if (!result.ok) await this.giveBack(decision);
    return { decision, reserve: result };
  }

  /** A refused request does not count against the token limit. */
  private async giveBack(decision: RateDecision): Promise<void> {
    if (decision.ticket) await this.rateLimiter.adjust(decision.ticket, 0).catch(() => undefined);
  }
}
