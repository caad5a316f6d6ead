/**
 * Money and limits before the call: the key's rate limit (requests and tokens per minute)
 * and its budget (an estimate reserved atomically). Both fail closed: a store that cannot
 * be reached refuses the request with a 503 rather than letting it through unmetered, and
 * so does a settlement journal that still owes the store charges from an outage (the
 * budgets it would read are short of that spend until the journal is replayed).
 */
import type { TokenEstimate } from '../router/quota.ts';
import { GatewayError } from '../errors.ts';
import type { ModelRoute } from '../config/snapshot.ts';
import { estimateCost, MAX_ESTIMATE_USD, type OutputBound } from '../accounting/estimate.ts';
import type { Stores } from '../stores/index.ts';
import {
  AdmissionStoreError,
  isStoreUnavailable,
  type AdmitResult,
  type RateDecision,
  type RateLimits,
  type RateTicket,
  type ReserveRequest,
  type ReserveResult,
  type Reservation,
} from '../stores/index.ts';
import { budgetRefusal } from './budget-refusal.ts';
import type { RequestContext } from './context.ts';

export interface Admission {
  ticket: RateTicket | undefined;
  reservation: Reservation | undefined;
}

/** `x-ratelimit-reset-*` in OpenAI's duration style: `1s`, `6m0s`, `250ms`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.ceil(ms))}ms`;
  const seconds = Math.ceil(ms / 1000);
  return seconds < 60 ? `${seconds}s` : `${Math.floor(seconds / 60)}m${seconds % 60}s`;
}

export function rateLimitHeaders(d: RateDecision): Record<string, string> {
  const headers: Record<string, string> = {};
  // Literal names, not built per request: these are set on every metered answer.
  if (d.requests) {
    headers['x-ratelimit-limit-requests'] = String(d.requests.limit);
    headers['x-ratelimit-remaining-requests'] = String(d.requests.remaining);
    headers['x-ratelimit-reset-requests'] = formatDuration(d.requests.resetMs);
  }
  if (d.tokens) {
    headers['x-ratelimit-limit-tokens'] = String(d.tokens.limit);
    headers['x-ratelimit-remaining-tokens'] = String(d.tokens.remaining);
    headers['x-ratelimit-reset-tokens'] = formatDuration(d.tokens.resetMs);
  }
  return headers;
}

/**
 * The decision as the window stands once a budget refusal or failure has given the request's
 * estimate back (the admitter counts the request, not its tokens): remaining tokens are what
 * they were before it. The request itself stays counted, and the window's reset with it.
 */
export function tokensGivenBack(d: RateDecision, tokens: number): RateDecision {
  if (!d.tokens) return d;
  const remaining = Math.min(d.tokens.limit, d.tokens.remaining + tokens);
  return { ...d, tokens: { ...d.tokens, remaining } };
}

function unavailable(what: string, cause: unknown): GatewayError {
  return new GatewayError('service_unavailable', `${what} is unavailable; the request was not charged`, {
    cause,
    headers: { 'retry-after': '1' },
  });
}

/** Settlements the budget store has not received yet, and whether any are waiting. */
export interface PendingSettlements {
  readonly pending: number;
}

export interface AdmissionDeps {
  stores: Stores;
  journal?: PendingSettlements | undefined;
}

export async function admit(
  deps: AdmissionDeps,
  ctx: RequestContext,
  /** Every model the request may land on (the estimate is priced at the dearest); asked only for metered keys. */
  routes: () => readonly ModelRoute[],
  promptTokens: () => number,
  output: OutputBound,
  /** Media endpoints priced per unit (image, second, character): the estimate in USD instead of tokens. */
  unitEstimateUsd?: (routes: readonly ModelRoute[]) => number,
): Promise<Admission> {
  const stores = deps.stores;
  const spec = ctx.key.spec;
  const keyRef = { tenant: ctx.tenant.name, keyId: ctx.key.id };
  refuseWhileOwed(deps, ctx);
  const metered = spec.budget !== undefined || spec.rateLimit?.tokensPerMinute !== undefined;
  const estimate = !metered
    ? { promptTokens: 0, maxOutputTokens: 0, costUsd: 0 }
    : unitEstimateUsd
      ? {
          promptTokens: 0,
          maxOutputTokens: 0,
          costUsd: Math.min(unitEstimateUsd(routes()), MAX_ESTIMATE_USD),
        }
      : estimateCost(routes(), promptTokens(), output);
  const admission: Admission = { ticket: undefined, reservation: undefined };
  const tokens = estimate.promptTokens + estimate.maxOutputTokens;
  ctx.tokenEstimate = tokenEstimate(
    metered,
    unitEstimateUsd !== undefined,
    { prompt: estimate.promptTokens, output: estimate.maxOutputTokens },
    routes,
    promptTokens,
    output,
  );
  const reserveRequest = spec.budget && reserveRequestOf(ctx, spec.budget, estimate.costUsd);

  // Both: one step (one Redis round trip), with the same outcomes as the two below in turn.
  if (spec.rateLimit && reserveRequest) {
    let both: AdmitResult;
    try {
      both = await stores.admitter.admit(keyRef, spec.rateLimit, tokens, reserveRequest);
    } catch (err) {
      if (!(err instanceof AdmissionStoreError)) throw err;
      // The rate limit had admitted before the budget store failed: its state is known, so the
      // 503 carries it (clients pacing by these headers need them most when the gateway is degraded).
      if (err.decision) applyRateDecision(ctx, spec.rateLimit, tokensGivenBack(err.decision, tokens), tokens);
      throw isStoreUnavailable(err.cause) ? unavailable(`the ${err.store}`, err.cause) : err.cause;
    }
    const refused = both.reserve !== undefined && !both.reserve.ok;
    applyRateDecision(
      ctx,
      spec.rateLimit,
      refused ? tokensGivenBack(both.decision, tokens) : both.decision,
      tokens,
    );
    if (both.reserve && !both.reserve.ok)
      throw await budgetRefusal(
        stores.budgets,
        reserveRequest,
        reserveRequest.budget,
        reserveRequest.estimateUsd,
        both.reserve.remainingUsd,
        'request',
      );
    admission.ticket = both.decision.ticket;
    admission.reservation = both.reserve?.ok ? both.reserve.reservation : undefined;
    return admission;
  }

  if (spec.rateLimit)
    admission.ticket = await countRate(stores, ctx, spec.rateLimit, tokens).catch(rateLimiterDown);
  if (reserveRequest) admission.reservation = await holdBudget(stores, reserveRequest);
  return admission;
}

/**
 * The same token estimate for a deployment's `tpm` window, made only when one asks for it (an
 * unmetered key's request is not tokenised otherwise). Media priced per unit count no tokens.
 */
function tokenEstimate(
  metered: boolean,
  perUnit: boolean,
  tokens: TokenEstimate,
  routes: () => readonly ModelRoute[],
  promptTokens: () => number,
  output: OutputBound,
): () => TokenEstimate {
  if (metered || perUnit) return () => tokens;
  let made: TokenEstimate | undefined;
  return () => {
    if (made === undefined) {
      const e = estimateCost(routes(), promptTokens(), output);
      made = { prompt: e.promptTokens, output: e.maxOutputTokens };
    }
    return made;
  };
}

/**
 * A request refused before admission (a stored chain too long to continue) still counts
 * against its key's request rate, so refusals cannot be sent faster than answers: past the
 * limit the answer is the 429 instead. No tokens, no budget. A rate limiter that cannot be
 * reached leaves the refusal as it was (the request is refused either way).
 */
export async function countRefused(stores: Stores, ctx: RequestContext): Promise<void> {
  const limits = ctx.key.spec.rateLimit;
  if (!limits) return;
  await countRate(stores, ctx, limits, 0).catch((err: unknown) => {
    if (!isStoreUnavailable(err)) throw err;
  });
}

function refuseWhileOwed(deps: AdmissionDeps, ctx: RequestContext): void {
  const spec = ctx.key.spec;
  const owed = deps.journal?.pending ?? 0;
  if (owed > 0 && (spec.budget !== undefined || spec.rateLimit !== undefined))
    throw new GatewayError(
      'service_unavailable',
      `${owed} settlement${owed === 1 ? '' : 's'} from a budget store outage ${owed === 1 ? 'is' : 'are'} still being applied; ` +
        'requests on keys with a budget or rate limit are refused until then; the request was not charged',
      { headers: { 'retry-after': '1' } },
    );
}

/**
 * The rate limit alone (one request, no tokens), no budget hold: for calls that cost nothing
 * (reads of objects already paid for answer a key whose budget is spent), and the first step
 * of a create whose hold depends on a lookup (`reserveHold` after it), so a request failing on
 * that lookup still counts against the limit.
 */
export async function admitRequest(deps: AdmissionDeps, ctx: RequestContext): Promise<Admission> {
  refuseWhileOwed(deps, ctx);
  const limits = ctx.key.spec.rateLimit;
  if (!limits) return { ticket: undefined, reservation: undefined };
  const ticket = await countRate(deps.stores, ctx, limits, 0).catch(rateLimiterDown);
  return { ticket, reservation: undefined };
}

/**
 * After `admitRequest`: holds `estimateUsd` (up to `ceilingUsd`) against the key's budget
 * (nothing for a key without one) and keeps the reservation on the request's admission,
 * which settlement releases.
 */
export async function reserveHold(
  deps: AdmissionDeps,
  ctx: RequestContext,
  estimateUsd: number,
  ceilingUsd = MAX_ESTIMATE_USD,
): Promise<void> {
  const budget = ctx.key.spec.budget;
  if (!budget) return;
  const reservation = await holdBudget(
    deps.stores,
    reserveRequestOf(ctx, budget, Math.min(estimateUsd, ceilingUsd)),
  );
  ctx.admission = { ticket: ctx.admission?.ticket, reservation };
}

/**
 * One request and `tokens` tokens against the key's rate limit: the `x-ratelimit-*` headers,
 * a 429 when refused. The limiter's own failure is the caller's to judge: admissions fail
 * closed (`rateLimiterDown`), a refusal being counted stands as it was.
 */
async function countRate(
  stores: Stores,
  ctx: RequestContext,
  limits: RateLimits,
  tokens: number,
): Promise<RateTicket | undefined> {
  const decision = await stores.rateLimiter.acquire(
    { tenant: ctx.tenant.name, keyId: ctx.key.id },
    limits,
    tokens,
  );
  applyRateDecision(ctx, limits, decision, tokens);
  return decision.ticket;
}

/** Holds the request's estimate against its key's budget; a 402 when it does not fit. */
async function holdBudget(stores: Stores, req: ReserveRequest): Promise<Reservation> {
  let result: ReserveResult;
  // try/await, not `.catch`: a store that throws before returning a promise fails closed too.
  try {
    result = await stores.budgets.reserve(req);
  } catch (err) {
    return budgetStoreDown(err);
  }
  if (!result.ok)
    throw await budgetRefusal(
      stores.budgets,
      req,
      req.budget,
      req.estimateUsd,
      result.remainingUsd,
      'request',
    );
  return result.reservation;
}

/** What the budget store is asked to hold for this request. */
function reserveRequestOf(
  ctx: RequestContext,
  budget: NonNullable<ReserveRequest['budget']>,
  estimateUsd: number,
): ReserveRequest {
  const spec = ctx.key.spec;
  // Named fields, not a spread of a key reference: a spread clones through a slow path on every request.
  return {
    tenant: ctx.tenant.name,
    keyId: ctx.key.id,
    budget,
    estimateUsd,
    autoRecharge: spec.autoRecharge?.enabled ? spec.autoRecharge : undefined,
    reference: ctx.id,
  };
}

/** A store that cannot be reached refuses the request (503) rather than letting it through unmetered. */
const failClosed =
  (what: string) =>
  (err: unknown): never => {
    throw isStoreUnavailable(err) ? unavailable(what, err) : err;
  };
const rateLimiterDown = failClosed('the rate limiter');
const budgetStoreDown = failClosed('the budget store');

/** The `x-ratelimit-*` headers of every answer, and a 429 when the limit refused. */
function applyRateDecision(
  ctx: RequestContext,
  limits: RateLimits,
  decision: RateDecision,
  tokens: number,
): void {
  const headers = rateLimitHeaders(decision);
  Object.assign(ctx.responseHeaders, headers);
  if (decision.allowed) return;
  const which = decision.requests && !decision.requests.allowed ? 'requests' : 'tokens';
  const limit = which === 'requests' ? limits.requestsPerMinute : limits.tokensPerMinute;
  const message = decision.tokensExceedLimit
    ? `request needs about ${tokens} tokens, more than this key's limit of ${limit} tokens per minute`
    : `rate limit exceeded: ${limit} ${which} per minute for this key; retry after ${Math.ceil(decision.retryAfterMs / 1000)}s`;
  throw new GatewayError('rate_limit_exceeded', message, {
    headers: { ...headers, 'retry-after': String(Math.max(1, Math.ceil(decision.retryAfterMs / 1000))) },
  });
}
