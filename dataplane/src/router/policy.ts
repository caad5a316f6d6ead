/**
 * What to do after a failed attempt, as a pure function of the failure and the budget left.
 * Rules: callers' errors are never retried; a silent deployment is failed over, never
 * retried; 429 honours Retry-After when it fits the time budget; other faults fail over,
 * and only retry the same deployment (with jittered backoff) when nothing else is left.
 */
import type { UpstreamError } from '../providers/types.ts';

export interface RetryConfig {
  maxAttempts: number;
  /** Longest Retry-After the gateway waits out itself rather than failing. */
  maxRetryAfterMs: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** Retries of one deployment when no alternative exists. */
  maxSameRetries: number;
}

export const DEFAULT_RETRY: RetryConfig = {
  maxAttempts: 5,
  maxRetryAfterMs: 10_000,
  backoffBaseMs: 100,
  backoffMaxMs: 2_000,
  maxSameRetries: 2,
};

export interface FailureContext {
  error: UpstreamError;
  attemptsMade: number;
  sameRetries: number;
  remainingMs: number;
  hasAlternative: boolean;
  random: number;
}

export type Decision =
  { kind: 'retry-same'; delayMs: number } | { kind: 'next' } | { kind: 'larger-context' } | { kind: 'stop' };

export function decide(ctx: FailureContext, cfg: RetryConfig = DEFAULT_RETRY): Decision {
  const { error } = ctx;
  if (error.kind === 'bad_request' || error.kind === 'content_policy') return { kind: 'stop' };
  if (ctx.attemptsMade >= cfg.maxAttempts) return { kind: 'stop' };
  // The request's own deadline bounds failover too, not only waits.
  if (ctx.remainingMs <= 0) return { kind: 'stop' };
  if (error.kind === 'context_length') return { kind: 'larger-context' };
  if (ctx.hasAlternative) return { kind: 'next' };
  if (error.kind === 'timeout' || error.kind === 'auth' || error.kind === 'not_found')
    return { kind: 'stop' };
  if (ctx.sameRetries >= cfg.maxSameRetries) return { kind: 'stop' };
  const delayMs =
    error.kind === 'rate_limited' && error.retryAfterMs !== undefined
      ? error.retryAfterMs
      : backoffMs(ctx.sameRetries, ctx.random, cfg);
  if (error.kind === 'rate_limited' && delayMs > cfg.maxRetryAfterMs) return { kind: 'stop' };
  return delayMs < ctx.remainingMs ? { kind: 'retry-same', delayMs } : { kind: 'stop' };
}

/** Exponential backoff with full jitter, never zero so a provider is never hammered. */
export function backoffMs(retry: number, random: number, cfg: RetryConfig = DEFAULT_RETRY): number {
  const ceiling = Math.min(cfg.backoffMaxMs, cfg.backoffBaseMs * 2 ** retry);
  return Math.max(cfg.backoffBaseMs / 2, Math.round(random * ceiling));
}

/** Faults that count against the deployment's circuit breaker. */
export const isDeploymentFault = (e: UpstreamError): boolean =>
  e.kind === 'server' ||
  e.kind === 'overloaded' ||
  e.kind === 'network' ||
  e.kind === 'timeout' ||
  e.kind === 'auth' ||
  e.kind === 'not_found';
