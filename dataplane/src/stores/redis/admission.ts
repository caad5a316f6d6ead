/** Rate limit and budget reserve in one Redis script: one round trip for a metered key. */
import type { Redis } from 'ioredis';
import { AdmissionStoreError, type Admitter, type AdmitResult } from '../admission.ts';
import type { ReserveRequest } from '../budget.ts';
import type { RateLimits } from '../rate-limiter.ts';
import { hasLimits, unlimitedDecision } from '../sliding-window.ts';
import type { KeyRef } from '../types.ts';
import type { RedisBudgetStore } from './budget.ts';
import { ADMIT_ARGS, admitScript } from './lua/admit.ts';
import type { RedisRateLimiter } from './rate-limiter.ts';
import { bindScript, type BoundScript } from './script.ts';

export class RedisAdmitter implements Admitter {
  private readonly script: BoundScript;

  constructor(
    client: Redis,
    private readonly rateLimiter: RedisRateLimiter,
    private readonly budgets: RedisBudgetStore,
  ) {
    this.script = bindScript(client, admitScript, 'admission');
  }

  async admit(
    key: KeyRef,
    limits: RateLimits,
    tokenEstimate: number,
    reserve: ReserveRequest,
  ): Promise<AdmitResult> {
    // No limit counts nothing: the budget alone, as the separate calls did.
    if (!hasLimits(limits)) {
      try {
        return { decision: unlimitedDecision(), reserve: await this.budgets.reserve(reserve) };
      } catch (err) {
        throw new AdmissionStoreError('budget store', err);
      }
    }
    const rate = this.rateLimiter.acquireCall(key, limits, tokenEstimate);
    const budget = this.budgets.reserveCall(reserve);
    if (rate.args.length !== ADMIT_ARGS.rate || budget.args.length !== ADMIT_ARGS.budget)
      throw new Error('admission script: argument counts changed');
    let raw: unknown;
    try {
      raw = await this.script([...rate.keys, ...budget.keys], [...rate.args, ...budget.args]);
    } catch (err) {
      // The rate limit is the script's first step: as with separate calls, an unreachable
      // store is reported as the rate limiter's.
      throw new AdmissionStoreError('rate limiter', err);
    }
    if (!Array.isArray(raw) || raw.length !== 2) throw new Error('admission script: unexpected reply');
    const decision = rate.decide(raw[0]);
    return { decision, reserve: decision.allowed ? budget.result(raw[1]) : undefined };
  }
}
