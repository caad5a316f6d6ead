/**
 * A deployment's provider quota (ModelDeployment `rpm`/`tpm`) before each attempt. A full
 * window is a local decision, not an upstream fault: the router skips the deployment with no
 * health effect. A quota store that cannot answer fails open (the attempt goes ahead): the
 * quota spares the provider, it guards no money, and the provider still answers 429 itself.
 */
import { GatewayError } from '../errors.ts';
import type { Deployment } from '../config/snapshot.ts';
import type { DeploymentLimits, DeploymentQuotaStore } from '../stores/deployment-quota.ts';
import type { RateDecision, RateTicket } from '../stores/rate-limiter.ts';
import type { UpstreamError } from '../providers/types.ts';
import { isRequestFault } from './policy.ts';

/** A request's token estimate for a `tpm` window: the prompt and the output bound it asked for. */
export interface TokenEstimate {
  prompt: number;
  output: number;
}

/**
 * What one attempt counts against a deployment's `tpm`: the prompt plus the output bound, the
 * bound clamped to the deployment's own `maxOutputTokens` (a caller's max_tokens of 99,950 on a
 * deployment that writes at most 4,096 cannot use more than 4,096 of its quota).
 */
export function attemptTokens(d: Pick<Deployment, 'maxOutputTokens'>, e: TokenEstimate): number {
  const output = d.maxOutputTokens === undefined ? e.output : Math.min(e.output, d.maxOutputTokens);
  return Math.max(0, e.prompt) + Math.max(0, output);
}

/** How an attempt that took a window entry ended without an answer. */
export type FailedAttempt =
  /** Refused by the gateway itself before sending (translation, a local fault), or no connection made. */
  | { kind: 'unsent' }
  /** The caller left while the attempt was under way: the provider may have read the request. */
  | { kind: 'aborted' }
  | { kind: 'upstream'; error: UpstreamError };

/**
 * The tokens a failed attempt leaves in the deployment's window. Nothing where the provider
 * processed nothing: never sent, or refused on sight as the caller's (4xx: a bad request, too
 * large, a missing reference, context length) or the deployment's (auth, unknown model).
 * Otherwise (its own 429, a 5xx, a timeout or cut after sending, a caller gone mid-call) the
 * prompt only: the provider may have read it, and whatever output it made was never delivered
 * nor reported, so the output bound is not held for 60 s against every tenant.
 */
export function failedAttemptTokens(end: FailedAttempt, prompt: number): number {
  if (end.kind === 'unsent') return 0;
  if (end.kind === 'aborted') return prompt;
  const e = end.error;
  if (e.unsent === true) return 0;
  if (isRequestFault(e)) return 0;
  switch (e.kind) {
    case 'too_large':
    case 'context_length':
    case 'auth':
    case 'not_found':
      return 0;
    default:
      return prompt;
  }
}

/** A quota window entry an attempt holds: `prompt` is what stays if it fails after reaching the provider. */
export interface QuotaHold {
  ticket: RateTicket;
  prompt: number;
}

export type QuotaVerdict =
  /** `ticket` is undefined when the deployment has no quota or the store failed open. */
  | { kind: 'go'; ticket: RateTicket | undefined; prompt?: number | undefined }
  | { kind: 'full'; retryAfterMs: number; tooLarge?: boolean | undefined };

export const NO_QUOTA: QuotaVerdict = { kind: 'go', ticket: undefined };

export const hasQuota = (d: Deployment): boolean => d.rpm !== undefined || d.tpm !== undefined;

/** The deployment's quota, or undefined when it has none (no store call at all). */
export function limitsOf(d: Deployment): DeploymentLimits | undefined {
  return d.rpm === undefined && d.tpm === undefined ? undefined : { rpm: d.rpm, tpm: d.tpm };
}

/** A window's answer as the router acts on it. */
export function verdictOf(decision: RateDecision): QuotaVerdict {
  return decision.allowed
    ? { kind: 'go', ticket: decision.ticket }
    : decision.tokensExceedLimit
      ? { kind: 'full', retryAfterMs: decision.retryAfterMs, tooLarge: true }
      : { kind: 'full', retryAfterMs: decision.retryAfterMs };
}

/**
 * The 429 when every candidate left was at its quota (or otherwise unavailable): Retry-After is
 * the earliest moment one of them takes a request again. It names the deployments' quota, so a
 * caller can tell it from its own key's rate limit.
 */
export function quotaExhausted(model: string, waitsMs: readonly number[]): GatewayError {
  const wait = Math.min(...waitsMs);
  return new GatewayError(
    'rate_limit_exceeded',
    `every deployment of ${model} is at its provider quota (requests or tokens per minute); ` +
      'not sent upstream, not charged',
    { headers: { 'retry-after': String(Math.max(1, Math.ceil(wait / 1000))) } },
  );
}

/**
 * Every candidate refused the request as larger than its whole tokens-per-minute quota: no
 * wait makes room for it, so a 429 with Retry-After would have SDKs retry it for ever. A 413
 * naming the largest quota, without Retry-After.
 */
export function quotaNeverFits(model: string, deployments: readonly Pick<Deployment, 'tpm'>[]): GatewayError {
  const tpms = deployments.map((d) => d.tpm).filter((t): t is number => t !== undefined);
  const largest = tpms.length > 0 ? Math.max(...tpms) : 0;
  return new GatewayError(
    'request_too_large',
    `request too large for every deployment of ${model}: its token estimate (prompt plus max_tokens) ` +
      `is more than the largest provider quota of ${largest} tokens per minute, so it can never be sent; ` +
      'shorten the input or lower max_tokens; not sent upstream, not charged',
  );
}

export interface QuotaObserver {
  quotaSkipped?(d: Deployment): void;
  quotaStoreFailed?(d: Deployment): void;
}

export type QuotaLog = (fields: Record<string, unknown>, message: string) => void;

export class QuotaGate {
  /** Set while the store is failing: one log line per outage, not one per request. */
  private failing = false;

  constructor(
    private readonly store: DeploymentQuotaStore | undefined,
    private readonly observer: QuotaObserver,
    private readonly log: QuotaLog,
  ) {}

  async take(d: Deployment, tokens: (() => TokenEstimate) | undefined): Promise<QuotaVerdict> {
    const limits = limitsOf(d);
    if (!limits || !this.store) return NO_QUOTA;
    let decision: RateDecision;
    // Tokens count only where a tpm is set: the estimate may need the prompt tokenised.
    const estimate = limits.tpm === undefined ? undefined : tokens?.();
    try {
      decision = await this.store.take(d.name, limits, estimate ? attemptTokens(d, estimate) : 0);
    } catch (err) {
      this.observer.quotaStoreFailed?.(d);
      if (!this.failing)
        this.log(
          { deployment: d.name, err: (err as Error).message },
          'deployment quota store unavailable: serving without provider quotas until it is back',
        );
      this.failing = true;
      return NO_QUOTA;
    }
    this.failing = false;
    const verdict = verdictOf(decision);
    if (verdict.kind === 'full') this.observer.quotaSkipped?.(d);
    else if (estimate) verdict.prompt = Math.max(0, estimate.prompt);
    return verdict;
  }

  /**
   * Resolves the window entry of an attempt that gave no answer (`failedAttemptTokens`). Not
   * awaited by the router; a failing store leaves the estimate, as settlement's correction does.
   */
  release(verdict: QuotaVerdict, end: FailedAttempt): void {
    if (verdict.kind !== 'go' || !verdict.ticket || !this.store) return;
    this.store.adjust(verdict.ticket, failedAttemptTokens(end, verdict.prompt ?? 0)).catch(() => undefined);
  }
}
