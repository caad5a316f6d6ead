/**
 * Failover across a model's deployments and its fallback models. The router knows nothing
 * about providers or endpoints: it runs an `attempt` function per candidate and decides,
 * from the normalised failure, whether to retry, fail over, go to a larger-context model or
 * stop. Health (circuit, cooldown, load) is shared by every request of this pod.
 */
import type { Capability } from '@gantry/crds';
import { ResponseHeaders } from '../brand.ts';
import { GatewayError } from '../errors.ts';
import type { Deployment, Snapshot } from '../config/snapshot.ts';
import type { UpstreamError } from '../providers/types.ts';
import { orderDeployments, type Skipped } from './balance.ts';
import { toGatewayError } from './errors.ts';
import type { Claim, HealthRegistry } from './health.ts';
import {
  backoffMs,
  boundedRetryAfter,
  cutByDeadline,
  decide,
  DEFAULT_MAX_COOLDOWN_MS,
  DEFAULT_RETRY,
  isDeploymentFault,
  isStreamFault,
  mayHaveActed,
  type RetryConfig,
} from './policy.ts';
import type { ClientSignal } from './client-signal.ts';
import { ClientAbortError, UpstreamFailure } from './upstream.ts';
import { lostObject, type NamedObject } from './lost-object.ts';
import {
  hasQuota,
  NO_QUOTA,
  QuotaGate,
  quotaExhausted,
  quotaNeverFits,
  type QuotaLog,
  type QuotaObserver,
  type FailedAttempt,
  type TokenEstimate,
} from './quota.ts';
import type { DeploymentQuotaStore } from '../stores/deployment-quota.ts';
import type { RateTicket } from '../stores/rate-limiter.ts';

export interface RouteRequest {
  model: string;
  snapshot: Snapshot;
  /** Key/tenant access: fallback models the caller may not use are never tried. */
  allowed: (model: string) => boolean;
  /** Capabilities a deployment needs for this request (documents, vision, ...). */
  needs: readonly Capability[];
  signal: ClientSignal;
  deadline: number;
  /** Only deployments accepting this filter are candidates (e.g. prefill continuation). */
  filter?: (d: Deployment) => boolean;
  /**
   * The request is pinned to the deployment holding objects it names (a chat naming uploaded
   * files): an upstream 404 that blames one of them (see `lostObject`) is the caller's 404
   * naming its field, and no fault of the deployment (a caller could otherwise trip its breaker
   * at will). Any other 404 (a misrouted deployment) counts as the deployment's failure.
   * `log` hears the upstream's own words either way the 404 goes.
   */
  missingObject?: { objects: readonly NamedObject[]; log?: LostObjectLog | undefined };
  /**
   * The request creates something kept upstream (a file, a batch, a job): an attempt that may
   * have done so before failing is not repeated anywhere, and the caller is told it may exist.
   */
  createsObject?: boolean;
  /**
   * The value is a stream whose verdict on the deployment comes at its end (`streamEnded`):
   * its first token does not clear the deployment's past faults.
   */
  verdictAtEnd?: boolean;
  /**
   * The request's token estimate (admission's: prompt plus the output bound), taken from a
   * deployment's `tpm` window before each attempt on it. Absent: the attempt counts no tokens.
   */
  tokens?: (() => TokenEstimate) | undefined;
  /** Hears the answering deployment's quota window entry, to correct its tokens at settlement. */
  onQuotaTicket?: ((d: Deployment, ticket: RateTicket) => void) | undefined;
}

export type LostObjectLog = (fields: Record<string, unknown>, message: string) => void;

export interface AttemptLog {
  attempts: number;
  /** Names of deployments that failed, in order, without repeats. */
  failed: string[];
}

export interface Routed<T> {
  value: T;
  deployment: Deployment;
  log: AttemptLog;
  /** The slot the answering call holds: a stream's verdict at its end (`streamEnded`) names it. */
  claim: Claim;
}

export interface RouterObserver extends QuotaObserver {
  attempt(d: Deployment, outcome: 'success' | UpstreamError['kind'], seconds: number): void;
}

export interface RouterDeps {
  health: HealthRegistry;
  observer: RouterObserver;
  retry?: RetryConfig;
  random?: () => number;
  now?: () => number;
  sleep?: (ms: number, signal: ClientSignal) => Promise<void>;
  /** Deployments' provider quota windows (ModelDeployment rpm/tpm); none = not enforced. */
  quota?: DeploymentQuotaStore | undefined;
  /** Where a failing quota store is reported (once per outage). */
  log?: QuotaLog | undefined;
}

interface Candidate {
  deployment: Deployment;
  modelIndex: number;
}

export class Router {
  private readonly retry: RetryConfig;
  private readonly random: () => number;
  private readonly now: () => number;
  private readonly sleep: (ms: number, signal: ClientSignal) => Promise<void>;
  private readonly quota: QuotaGate;

  constructor(private readonly deps: RouterDeps) {
    this.quota = new QuotaGate(deps.quota, deps.observer, deps.log ?? (() => undefined));
    this.retry = deps.retry ?? DEFAULT_RETRY;
    this.random = deps.random ?? Math.random;
    this.now = deps.now ?? Date.now;
    this.sleep = deps.sleep ?? abortableSleep;
  }

  async execute<T>(req: RouteRequest, attempt: (d: Deployment) => Promise<T>): Promise<Routed<T>> {
    const { candidates, skipped } = this.plan(req);
    const log: AttemptLog = { attempts: 0, failed: [] };
    let index = 0;
    let sameRetries = 0;
    let last: { error: UpstreamError; deployment: Deployment } | undefined;
    /** Waits of the deployments skipped for a full quota window, for the 429's Retry-After. */
    const quotaWaits: number[] = [];
    /** Whether every quota refusal was a request larger than the deployment's whole tpm. */
    let neverFits = true;

    while (index < candidates.length) {
      const { deployment, modelIndex } = candidates[index]!;
      const claim = this.deps.health.claim(deployment);
      if (!claim) {
        neverFits = false;
        index++;
        sameRetries = 0;
        continue;
      }
      // No await for a deployment without a quota: the common case costs nothing per attempt.
      const quota = hasQuota(deployment) ? await this.quota.take(deployment, req.tokens) : NO_QUOTA;
      if (quota.kind === 'full') {
        // Our own pacing, not the provider's answer: the slot goes back, health is not told.
        this.deps.health.release(deployment, claim);
        quotaWaits.push(quota.retryAfterMs);
        if (quota.tooLarge !== true) neverFits = false;
        index++;
        sameRetries = 0;
        continue;
      }
      log.attempts++;
      const started = this.now();
      try {
        const value = await attempt(deployment);
        this.deps.health.succeed(deployment, this.now() - started, req.verdictAtEnd === true, claim);
        this.deps.observer.attempt(deployment, 'success', (this.now() - started) / 1000);
        if (quota.ticket) req.onQuotaTicket?.(deployment, quota.ticket);
        return { value, deployment, log, claim };
      } catch (err) {
        // Every window entry is resolved here or at settlement: one left at its estimate would
        // hold a shared deployment's tpm for 60 s against every tenant, uncharged.
        this.quota.release(quota, failedAttempt(err, req.signal.aborted));
        if (err instanceof ClientAbortError || req.signal.aborted) {
          this.deps.health.release(deployment, claim);
          throw err instanceof ClientAbortError ? err : new ClientAbortError();
        }
        // Our own translation refused the request (e.g. a part this provider cannot take).
        if (err instanceof GatewayError) {
          this.deps.health.release(deployment, claim);
          throw withLog(err, log);
        }
        // Anything but a classified upstream outcome is the gateway's own fault (a bug, a stack
        // overflow while translating): it says nothing about this deployment and would fail the
        // same way on every other one, so no health is charged and nothing is failed over.
        if (!(err instanceof UpstreamFailure)) {
          this.deps.health.release(deployment, claim);
          throw withLog(localFault(err), log);
        }
        if (req.missingObject && (err.upstream.status === 404 || err.upstream.status === 403)) {
          const lost = lostObject(err.upstream, req.missingObject.objects);
          req.missingObject.log?.(
            {
              deployment: deployment.name,
              upstreamStatus: err.upstream.status,
              upstreamMessage: err.upstream.message,
              lost: lost?.param,
            },
            lost
              ? 'upstream no longer holds a named object'
              : // The general rule already judged it (sendOk): the log says what health is told.
                err.upstream.kind === 'bad_reference'
                ? "upstream 404 names none of the objects but a reference the request sent: the caller's"
                : 'upstream 404 names none of the objects: a deployment failure',
          );
          if (lost) {
            this.deps.health.release(deployment, claim);
            throw withLog(
              new GatewayError(
                'not_found',
                lost.message ?? (err.upstream.message || `${lost.upstreamId} not found`),
                {
                  param: lost.param,
                },
              ),
              log,
            );
          }
        }
        const error = boundedRetryAfter(err.upstream, this.retry.maxCooldownMs ?? DEFAULT_MAX_COOLDOWN_MS);
        // The request's own time ran out, not the deployment's: counted, slow clients (and
        // earlier stages or attempts) could eject healthy deployments. Nor is there time left
        // for another attempt.
        const deadlineCut =
          error.kind === 'timeout' &&
          cutByDeadline({
            endedAt: this.now(),
            deadline: req.deadline,
            budgetMs: req.deadline - started,
            limits: deployment.timeouts,
          });
        this.deps.observer.attempt(deployment, error.kind, (this.now() - started) / 1000);
        if (deadlineCut) this.deps.health.release(deployment, claim);
        else this.recordHealth(deployment, error, sameRetries, claim);
        if (!log.failed.includes(deployment.name)) log.failed.push(deployment.name);
        if (req.createsObject && mayHaveActed(error))
          throw withLog(outcomeUnknown(error, deployment.name), log);
        last = { error, deployment };
        if (deadlineCut) break;
        const decision = decide(
          {
            error,
            attemptsMade: log.attempts,
            sameRetries,
            remainingMs: req.deadline - this.now(),
            hasAlternative: index + 1 < candidates.length,
            random: this.random(),
            policy: deployment.retry,
          },
          this.retry,
        );
        if (decision.kind === 'retry-same') {
          sameRetries++;
          await this.sleep(decision.delayMs, req.signal);
          continue;
        }
        sameRetries = 0;
        if (decision.kind === 'stop') break;
        index =
          decision.kind === 'next'
            ? nextAfter(candidates, index, deployment, error)
            : nextLargerContext(candidates, index, modelIndex, deployment);
      }
    }
    if (last) throw withLog(toGatewayError(last.error, last.deployment.name), log);
    if (quotaWaits.length > 0 && neverFits && skipped.length === 0)
      throw withLog(
        quotaNeverFits(
          req.model,
          candidates.map((c) => c.deployment),
        ),
        log,
      );
    if (quotaWaits.length > 0)
      throw withLog(
        quotaExhausted(req.model, [...quotaWaits, ...skipped.map((s) => s.until - this.now())]),
        log,
      );
    throw withLog(unavailable(req.model, skipped, this.now()), log);
  }

  /**
   * The end of a stream opened with `verdictAtEnd`: finished (no failure), or cut by the
   * upstream after its first token, which counts like a failed attempt when it is the
   * deployment's fault (`isStreamFault`). A stream its client left gets no verdict, nor does one admitted
   * before the deployment's circuit last opened (its claim says when).
   */
  streamEnded(part: Pick<Routed<unknown>, 'deployment' | 'claim'>, failure: UpstreamError | undefined): void {
    if (failure === undefined) this.deps.health.confirm(part.deployment, part.claim);
    else if (isStreamFault(failure)) this.deps.health.failAfter(part.deployment, part.claim);
  }

  /** Candidates in order: the model's deployments, then each allowed fallback model's. */
  private plan(req: RouteRequest): { candidates: Candidate[]; skipped: Skipped[] } {
    const route = req.snapshot.models.get(req.model);
    if (!route)
      throw new GatewayError('model_not_found', `model ${req.model} does not exist`, {
        param: 'model',
        refusedModel: req.model,
      });
    const chain = [route.model, ...route.fallbacks.filter((m) => m !== route.model && req.allowed(m))];
    const candidates: Candidate[] = [];
    const skipped: Skipped[] = [];
    chain.forEach((model, modelIndex) => {
      const deployments = (req.snapshot.models.get(model)?.deployments ?? []).filter(
        (d) => req.needs.every((c) => d.capabilities.has(c)) && (req.filter?.(d) ?? true),
      );
      const order = orderDeployments({
        deployments,
        view: (d) => this.deps.health.view(d),
        availability: (d) => this.deps.health.availability(d),
        random: this.random,
      });
      skipped.push(...order.skipped);
      for (const deployment of order.ordered) candidates.push({ deployment, modelIndex });
    });
    return { candidates, skipped };
  }

  private recordHealth(d: Deployment, error: UpstreamError, sameRetries: number, claim: Claim): void {
    const health = this.deps.health;
    if (error.kind === 'rate_limited') {
      health.coolDown(d, error.retryAfterMs ?? backoffMs(sameRetries, this.random(), this.retry), claim);
    } else if (isDeploymentFault(error)) health.fail(d, claim);
    else health.release(d, claim);
  }
}

/** How a failed attempt ended, for its quota window entry (`failedAttemptTokens`). */
function failedAttempt(err: unknown, aborted: boolean): FailedAttempt {
  if (err instanceof ClientAbortError || aborted) return { kind: 'aborted' };
  if (err instanceof UpstreamFailure) return { kind: 'upstream', error: err.upstream };
  // Our own translation's refusal or a local fault: nothing went upstream.
  return { kind: 'unsent' };
}

/**
 * The next candidate after a failover. After a byte-limit refusal (Anthropic's 413
 * `request_too_large`, the endpoint's own limit, the same for every key) candidates of the same
 * provider at the same host are skipped: each would take the whole upload (up to 32 MB) only to
 * refuse it alike, up to maxAttempts times. A token-rate `too_large` differs by tier and is not.
 */
function nextAfter(candidates: Candidate[], index: number, failed: Deployment, error: UpstreamError): number {
  if (error.kind !== 'too_large' || error.code !== 'request_too_large') return index + 1;
  const host = hostOf(failed.target.baseUrl);
  for (let i = index + 1; i < candidates.length; i++) {
    const d = candidates[i]!.deployment;
    if (d.provider !== failed.provider || hostOf(d.target.baseUrl) !== host) return i;
  }
  return candidates.length;
}

/** A base URL's host (with port); a URL that does not parse is compared whole. */
function hostOf(url: string): string {
  try {
    return new URL(url).host.toLowerCase();
  } catch {
    return url;
  }
}

/** After a context-length error: the next fallback model with a larger (or unknown) window. */
function nextLargerContext(
  candidates: Candidate[],
  index: number,
  modelIndex: number,
  failed: Deployment,
): number {
  for (let i = index + 1; i < candidates.length; i++) {
    const c = candidates[i]!;
    if (c.modelIndex === modelIndex) continue;
    const window = c.deployment.contextWindow;
    if (window === undefined || failed.contextWindow === undefined || window > failed.contextWindow) return i;
  }
  return candidates.length;
}

function unavailable(model: string, skipped: Skipped[], now: number): GatewayError {
  if (skipped.length === 0)
    return new GatewayError(
      'model_not_found',
      `model ${model} has no deployment that can serve this request`,
      {
        param: 'model',
      },
    );
  const until = Math.min(...skipped.map((s) => s.until));
  const headers = { 'retry-after': String(Math.max(1, Math.ceil((until - now) / 1000))) };
  if (skipped.every((s) => s.reason === 'cooldown'))
    return new GatewayError('rate_limit_exceeded', `every deployment of ${model} is rate limited upstream`, {
      headers,
    });
  return new GatewayError(
    'service_unavailable',
    `every deployment of ${model} is unavailable (circuit open)`,
    {
      headers,
    },
  );
}

/**
 * A create that failed in a way that may have created it: the caller decides, knowing that.
 * `x-should-retry: false` stops the official openai and anthropic SDKs, which otherwise
 * repeat a 502/504 on their own (twice by default) and make the object again.
 */
function outcomeUnknown(error: UpstreamError, deployment: string): GatewayError {
  const base = toGatewayError(error, deployment);
  return new GatewayError(
    base.type,
    `${base.message}; not retried, because the upstream may have created the object before ` +
      'failing: list your objects before creating it again',
    { headers: { ...base.headers, 'x-should-retry': 'false' } },
  );
}

function withLog(error: GatewayError, log: AttemptLog): GatewayError {
  Object.assign(error.headers, attemptHeaders(log));
  return error;
}

export function attemptHeaders(log: AttemptLog): Record<string, string> {
  const headers: Record<string, string> = {};
  if (log.attempts > 1) headers[ResponseHeaders.attempts] = String(log.attempts);
  if (log.failed.length > 0) headers[ResponseHeaders.failed] = log.failed.join(',');
  return headers;
}

function localFault(err: unknown): GatewayError {
  return new GatewayError(
    'internal_error',
    'internal error in the gateway while handling the upstream call',
    {
      cause: err,
    },
  );
}

function abortableSleep(ms: number, signal: ClientSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new ClientAbortError());
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new ClientAbortError());
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
