/**
 * What to do after a failed attempt, as a pure function of the failure, the deployment's
 * retry policy and the budget left. Rules: callers' errors are never retried; a silent
 * deployment (timeout) is never retried on the same deployment; a deployment whose
 * manifest has a `retry` policy is retried for the failures it lists, up to its attempts,
 * before failing over; without one it is failed over at once. When nothing else is left,
 * the same deployment is retried with jittered backoff (and a 429's Retry-After is waited
 * out when it fits the time budget). The request's deadline bounds every wait.
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
  /**
   * Longest Retry-After believed: a longer one (`1e12` seconds, a date in year 9999) is cut to
   * this, both for the deployment's cooldown and for the caller's own Retry-After (default 60 s).
   */
  maxCooldownMs?: number;
}

export const DEFAULT_MAX_COOLDOWN_MS = 60_000;

export const DEFAULT_RETRY: RetryConfig = {
  maxAttempts: 5,
  maxRetryAfterMs: 10_000,
  backoffBaseMs: 100,
  backoffMaxMs: 2_000,
  maxSameRetries: 2,
  maxCooldownMs: DEFAULT_MAX_COOLDOWN_MS,
};

/** A deployment's own retry policy (ModelDeployment `spec.retry`, defaults filled in). */
export interface DeploymentRetry {
  /** Attempts on the deployment for a listed failure, the first included, before failing over. */
  attempts: number;
  backoffMs: number;
  /** Longest wait between two attempts; a 429 asking for longer is failed over instead. */
  maxBackoffMs: number;
  /** Upstream statuses retried (429 and 5xx only). */
  retryOnStatus: ReadonlySet<number>;
  /** Connection refused or reset before any response. */
  retryOnConnectionError: boolean;
}

export const TRANSIENT_STATUSES: readonly number[] = [429, 500, 502, 503, 504, 529];

export interface FailureContext {
  error: UpstreamError;
  attemptsMade: number;
  /** Retries already made on the deployment that just failed, in this request. */
  sameRetries: number;
  remainingMs: number;
  hasAlternative: boolean;
  random: number;
  /** The failed deployment's policy; undefined = fail over at once. */
  policy?: DeploymentRetry | undefined;
}

export type Decision =
  { kind: 'retry-same'; delayMs: number } | { kind: 'next' } | { kind: 'larger-context' } | { kind: 'stop' };

/**
 * Failures the request itself caused: the same request fails the same way on every attempt and
 * every deployment, so it is neither retried nor failed over, and never held against health.
 * A request too large for one deployment's limit (`too_large`) is not one of them: limits differ
 * by tier, so it is failed over (never retried, never held against health) and is the caller's
 * only when no deployment takes it.
 */
export const isRequestFault = (e: UpstreamError): boolean =>
  e.kind === 'bad_request' || e.kind === 'content_policy' || e.kind === 'bad_reference';

export function decide(ctx: FailureContext, cfg: RetryConfig = DEFAULT_RETRY): Decision {
  const { error, policy } = ctx;
  // An event past the SSE bound that the request may have asked for (`requestCause`: echo,
  // image output, a huge body) is not failed over either: every deployment would be read
  // 16 MiB for it. Without a cause it is the deployment's fault and failed over (never retried
  // on the same deployment: `retryable` leaves it out).
  if (isRequestFault(error) || requestShapedOversize(error)) return { kind: 'stop' };
  if (ctx.attemptsMade >= cfg.maxAttempts) return { kind: 'stop' };
  // The request's own deadline bounds failover too, not only waits.
  if (ctx.remainingMs <= 0) return { kind: 'stop' };
  if (error.kind === 'context_length') return { kind: 'larger-context' };
  if (error.kind === 'too_large') return ctx.hasAlternative ? { kind: 'next' } : { kind: 'stop' };
  if (ctx.hasAlternative) {
    if (policy === undefined || ctx.sameRetries >= policy.attempts - 1 || !retryable(error, policy))
      return { kind: 'next' };
    const delayMs = delayBefore(error, ctx, policy.backoffMs, policy.maxBackoffMs, policy.maxBackoffMs);
    return delayMs !== undefined && delayMs < ctx.remainingMs
      ? { kind: 'retry-same', delayMs }
      : { kind: 'next' };
  }
  // Nothing else to try: the same deployment is the last resort, whatever its policy says.
  const lastResort = policy ?? {
    attempts: 1,
    backoffMs: cfg.backoffBaseMs,
    maxBackoffMs: cfg.backoffMaxMs,
    retryOnStatus: DEFAULT_STATUSES,
    retryOnConnectionError: true,
  };
  if (!retryable(error, lastResort)) return { kind: 'stop' };
  if (ctx.sameRetries >= Math.max(cfg.maxSameRetries, lastResort.attempts - 1)) return { kind: 'stop' };
  const delayMs = delayBefore(error, ctx, lastResort.backoffMs, lastResort.maxBackoffMs, cfg.maxRetryAfterMs);
  return delayMs !== undefined && delayMs < ctx.remainingMs
    ? { kind: 'retry-same', delayMs }
    : { kind: 'stop' };
}

const DEFAULT_STATUSES: ReadonlySet<number> = new Set(TRANSIENT_STATUSES);

/** A 429's Retry-After when it is at most `maxRetryAfterMs` (undefined when longer), else backoff. */
function delayBefore(
  error: UpstreamError,
  ctx: FailureContext,
  baseMs: number,
  maxMs: number,
  maxRetryAfterMs: number,
): number | undefined {
  if (error.kind === 'rate_limited' && error.retryAfterMs !== undefined)
    return error.retryAfterMs <= maxRetryAfterMs ? error.retryAfterMs : undefined;
  return jitteredBackoff(ctx.sameRetries, ctx.random, baseMs, maxMs);
}

/**
 * Whether a failure is one the policy retries on the same deployment. Timeouts never are
 * (a silent deployment is failed over); broken credentials or an unknown model cannot heal
 * between two attempts. A fault reported without a usable status counts as a plain 500/503.
 */
export function retryable(error: UpstreamError, policy: DeploymentRetry): boolean {
  switch (error.kind) {
    case 'network':
      return policy.retryOnConnectionError;
    case 'rate_limited':
      return policy.retryOnStatus.has(429);
    case 'server':
    case 'overloaded': {
      const fallback = error.kind === 'overloaded' ? 503 : 500;
      const status = error.status >= 500 && error.status <= 599 ? error.status : fallback;
      return policy.retryOnStatus.has(status);
    }
    default:
      return false;
  }
}

/** Exponential backoff with full jitter, never zero so a provider is never hammered. */
export function backoffMs(retry: number, random: number, cfg: RetryConfig = DEFAULT_RETRY): number {
  return jitteredBackoff(retry, random, cfg.backoffBaseMs, cfg.backoffMaxMs);
}

export function jitteredBackoff(retry: number, random: number, baseMs: number, maxMs: number): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(retry, 30));
  return Math.max(baseMs / 2, Math.round(random * ceiling));
}

/**
 * A provider's Retry-After as the router may use it. Beyond `maxMs` it is not advice but a
 * fault (a proxy's bogus header, a broken clock): honoured, one such 429 would keep the
 * deployment out of rotation until the pod restarts and tell every caller to come back in
 * 30,000 years. A value that is not a non-negative number is no advice at all.
 */
export function boundedRetryAfter(error: UpstreamError, maxMs: number): UpstreamError {
  const ms = error.retryAfterMs;
  if (ms === undefined || (ms >= 0 && ms <= maxMs)) return error;
  const bounded: UpstreamError = { ...error, retryAfterMs: ms > maxMs ? maxMs : undefined };
  if (bounded.retryAfterMs === undefined) delete bounded.retryAfterMs;
  return bounded;
}

/**
 * Whether the upstream may have acted on a request that failed, so that repeating a create (a
 * file, a batch, a job) could make it twice. It did not when it refused before doing anything
 * (429, 503/529, a 4xx) or was never reached; a 500/502/504, a 2xx it could not be understood,
 * a timeout or a connection broken after sending leave the outcome unknown.
 */
export function mayHaveActed(e: UpstreamError): boolean {
  switch (e.kind) {
    case 'server':
    case 'oversized':
      return true;
    case 'timeout':
    case 'network':
      return e.unsent !== true;
    default:
      return false;
  }
}

/**
 * How close to the request deadline a timeout counts as the deadline's: a limit cut to it
 * fires at the deadline or later, give or take a clock tick.
 */
const DEADLINE_SLACK_MS = 20;

export interface TimedOutAttempt {
  endedAt: number;
  /** The request's deadline, which caps every attempt's limits. */
  deadline: number;
  /** What was left of the request's time when the attempt began. */
  budgetMs: number;
  limits: { totalMs: number; headersMs: number; firstTokenMs: number | undefined };
}

/**
 * Whether a timed-out attempt was cut by the request's deadline rather than by the
 * deployment's own limits: it ended at the deadline, and the time it had was shorter than the
 * deployment's patience. The request's time goes on its upload (a client may trickle it for
 * the whole receive timeout), on earlier stages and on earlier attempts; none of that says
 * anything about this deployment. Nor does a correct answer that takes longer than the
 * request allows: its length is the caller's doing (`max_tokens`, the prompt's size), and
 * counting it let three such requests eject a healthy deployment. A deployment's own limit that
 * fires first ends the attempt before the deadline and still counts. So a deployment whose
 * `timeoutMs` is not below the request timeout is never counted for hanging on a non-streaming
 * call; the gateway warns of it at load (config/hang-warnings.ts).
 */
export function cutByDeadline(a: TimedOutAttempt): boolean {
  const patience = Math.max(a.limits.totalMs, a.limits.headersMs, a.limits.firstTokenMs ?? 0);
  return a.endedAt >= a.deadline - DEADLINE_SLACK_MS && a.budgetMs < patience - DEADLINE_SLACK_MS;
}

/**
 * Failures ending a stream after its first token that count against its deployment: a cut
 * (reset, stall) or the provider's own failure. Its key and model already worked; any other
 * in-stream error (the prompt rejected mid-way, a rate limit) is no fault of the deployment,
 * and counting it let a caller eject a deployment with three crafted requests. An event past
 * the parser's bound (`oversized`) counts unless the request may have asked for it
 * (`requestCause`: echo, image output, a huge body; see oversized-cause.ts).
 */
export const isStreamFault = (e: UpstreamError): boolean =>
  e.kind === 'server' ||
  e.kind === 'overloaded' ||
  e.kind === 'network' ||
  e.kind === 'timeout' ||
  (e.kind === 'oversized' && !requestShapedOversize(e));

/** An event past the SSE bound that the request itself may have asked for. */
const requestShapedOversize = (e: UpstreamError): boolean =>
  e.kind === 'oversized' && e.requestCause !== undefined;

/**
 * Faults that count against the deployment's circuit breaker: a stream's faults, plus a key or
 * model the deployment does not have (which a stream past its first token has shown it has).
 */
export const isDeploymentFault = (e: UpstreamError): boolean =>
  isStreamFault(e) || e.kind === 'auth' || e.kind === 'not_found';
