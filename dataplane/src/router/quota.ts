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

export type QuotaVerdict =
  /** `ticket` is undefined when the deployment has no quota or the store failed open. */
  { kind: 'go'; ticket: RateTicket | undefined } | { kind: 'full'; retryAfterMs: number };

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

  async take(d: Deployment, tokens: (() => number) | undefined): Promise<QuotaVerdict> {
    const limits = limitsOf(d);
    if (!limits || !this.store) return NO_QUOTA;
    let decision: RateDecision;
    try {
      // Tokens count only where a tpm is set: the estimate may need the prompt tokenised.
      decision = await this.store.take(d.name, limits, limits.tpm === undefined ? 0 : (tokens?.() ?? 0));
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
    return verdict;
  }
}
