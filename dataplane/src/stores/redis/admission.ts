/** Rate limit and budget reserve in one Redis script: one round trip for a metered key. */
import type { Redis } from 'ioredis';
import { AdmissionStoreError, type Admitter, type AdmitResult } from '../admission.ts';
import type { ReserveRequest } from '../budget.ts';
import type { RateLimits } from '../rate-limiter.ts';
import { hasLimits, unlimitedDecision } from '../sliding-window.ts';
import { systemClock, type Clock, type KeyRef } from '../types.ts';
import type { RedisBudgetStore } from './budget.ts';
import { ADMIT_ARGS, ADMIT_KEYS, admitScript } from './lua/admit.ts';
import type { RedisRateLimiter } from './rate-limiter.ts';
import { bindVariadicScript, type BoundScript } from './script.ts';

export class RedisAdmitter implements Admitter {
  private readonly script: BoundScript;

  constructor(
    client: Redis,
    private readonly rateLimiter: RedisRateLimiter,
    private readonly budgets: RedisBudgetStore,
    private readonly clock: Clock = systemClock,
  ) {
    this.script = bindVariadicScript(client, admitScript, 'admission');
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
    // One clock reading for both parts: the window entry and the hold share the admission time.
    const now = Math.floor(this.clock());
    const rate = this.rateLimiter.acquireCall(key, limits, tokenEstimate, now);
    const budget = this.budgets.admissionCall(reserve, now);
    const keys = rate.keys.concat(budget.keys);
    const args = rate.args.concat(budget.args);
    const recharge = keys.length > ADMIT_KEYS.base;
    if (
      keys.length !== ADMIT_KEYS.base + (recharge ? ADMIT_KEYS.recharge : 0) ||
      args.length !== ADMIT_ARGS.base + (recharge ? ADMIT_ARGS.recharge : 0)
    )
      throw new Error('admission script: key or argument counts changed');
    let raw: unknown;
    try {
      raw = await this.script(keys, args);
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
