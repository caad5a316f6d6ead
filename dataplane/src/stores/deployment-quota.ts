/**
 * Per-deployment provider quotas (ModelDeployment `rpm`/`tpm`): the per-key limiter's exact
 * sliding 60 s window, reused whole, under key names of their own. With Redis the window is
 * shared by every pod, as the provider's quota is.
 */
import type { Redis } from 'ioredis';
import { MemoryRateLimiter } from './memory/rate-limiter.ts';
import { MemoryState } from './memory/state.ts';
import type { RateDecision, RateLimiter, RateTicket } from './rate-limiter.ts';
import { KeySpace } from './redis/keys.ts';
import { RedisRateLimiter } from './redis/rate-limiter.ts';
import type { Clock, KeyRef } from './types.ts';

export interface DeploymentLimits {
  rpm?: number | undefined;
  tpm?: number | undefined;
}

export interface DeploymentQuotaStore {
  /** Counts one request of `tokens` tokens against the deployment's window if it has room, else nothing. */
  take(deployment: string, limits: DeploymentLimits, tokens: number): Promise<RateDecision>;
  /** Replaces a taken estimate with the actual count (once per ticket). */
  adjust(ticket: RateTicket, actualTokens: number): Promise<void>;
}

/**
 * The window's name inside the limiter. The limiter given to `DeploymentWindows` is never the
 * per-key one: in process it has a state of its own, in Redis its own key prefix
 * (`<prefix>:deployment:{name}:…`), which no key limit's `<prefix>:{tenant}:…` can equal.
 */
const windowOf = (deployment: string): KeyRef => ({ tenant: deployment, keyId: 'quota' });

export class DeploymentWindows implements DeploymentQuotaStore {
  constructor(private readonly limiter: RateLimiter) {}

  take(deployment: string, limits: DeploymentLimits, tokens: number): Promise<RateDecision> {
    return this.limiter.acquire(
      windowOf(deployment),
      { requestsPerMinute: limits.rpm, tokensPerMinute: limits.tpm },
      tokens,
    );
  }

  adjust(ticket: RateTicket, actualTokens: number): Promise<void> {
    return this.limiter.adjust(ticket, actualTokens);
  }
}

export function memoryDeploymentWindows(clock: Clock): DeploymentWindows {
  return new DeploymentWindows(new MemoryRateLimiter(new MemoryState(), clock));
}

export function redisDeploymentWindows(redis: Redis, prefix: string, clock: Clock): DeploymentWindows {
  return new DeploymentWindows(new RedisRateLimiter(redis, new KeySpace(`${prefix}:deployment`), clock));
}
