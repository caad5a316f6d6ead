/**
 * Per-deployment provider quotas (ModelDeployment `rpm`/`tpm`): the per-key limiter's exact
 * sliding 60 s window, reused whole, under key names of their own. With Redis the window is
 * shared by every pod, as the provider's quota is.
 */
import type { Redis } from 'ioredis';
import { MemoryRateLimiter } from './memory/rate-limiter.ts';
import { MemoryState } from './memory/state.ts';
import { RATE_WINDOW_MS, type RateDecision, type RateLimiter, type RateTicket } from './rate-limiter.ts';
import { isLive } from './sliding-window.ts';
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

/**
 * In process, a window is dropped once it has been idle a whole window: a renamed or removed
 * deployment's window (every revision's name, after hot reloads) would otherwise stay for the
 * pod's life, up to its rpm's entries each. Swept at most once a window, O(deployments) then;
 * an idle window's entries have all expired, so dropping it changes no decision.
 */
export class MemoryDeploymentWindows extends DeploymentWindows {
  private lastSweep: number;

  constructor(
    private readonly state: MemoryState,
    private readonly clock: Clock,
  ) {
    super(new MemoryRateLimiter(state, clock));
    this.lastSweep = clock();
  }

  override take(deployment: string, limits: DeploymentLimits, tokens: number): Promise<RateDecision> {
    const now = this.clock();
    if (now - this.lastSweep >= RATE_WINDOW_MS) {
      this.lastSweep = now;
      this.sweep(now);
    }
    return super.take(deployment, limits, tokens);
  }

  /** Windows held (for tests and the curious). */
  get size(): number {
    return this.state.rateWindows.size;
  }

  private sweep(now: number): void {
    for (const [key, win] of this.state.rateWindows) {
      const newest = win.entries.at(-1);
      if (newest === undefined || !isLive(newest.at, now, RATE_WINDOW_MS)) this.state.rateWindows.delete(key);
    }
  }
}

export function memoryDeploymentWindows(clock: Clock): MemoryDeploymentWindows {
  return new MemoryDeploymentWindows(new MemoryState(), clock);
}

export function redisDeploymentWindows(redis: Redis, prefix: string, clock: Clock): DeploymentWindows {
  return new DeploymentWindows(new RedisRateLimiter(redis, new KeySpace(`${prefix}:deployment`), clock));
}
