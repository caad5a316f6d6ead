/**
 * One Realtime response is one metered request: its own place on the key's rate limit (one
 * request and its estimated tokens) and its own budget hold before it starts, its own
 * settlement and usage record when `response.done` reports what it used (which corrects the
 * rate limit's estimate). Counting tokens only when the session ended let one session spend a
 * tokens-per-minute limit many times over inside the minute.
 */
import { randomUUID } from 'node:crypto';
import type { Deployment } from '../config/snapshot.ts';
import { GatewayError } from '../errors.ts';
import { budgetRefusal } from '../pipeline/budget-refusal.ts';
import { freshMetering, type RequestContext } from '../pipeline/context.ts';
import type { PipelineDeps } from '../pipeline/forward.ts';
import { settle } from '../pipeline/settlement.ts';
import { isStoreUnavailable, type RateTicket } from '../stores/index.ts';

/** A response's own context: the session's caller, snapshot and trace, a fresh id and clock. */
export function responseContext(session: RequestContext): RequestContext {
  const startedAt = Date.now();
  return {
    ...session,
    ...freshMetering(),
    id: randomUUID(),
    startedAt,
    usage: { ...session.usage },
  };
}

/**
 * Counts the response on the key's rate limit with `tokens` (429 when it has no room), then
 * reserves `estimateUsd` on its budget (402); a key without either has nothing to do. A budget
 * refusal gives the rate limit its tokens back.
 */
export async function holdResponse(
  deps: PipelineDeps,
  ctx: RequestContext,
  estimateUsd: number,
  tokens: number,
): Promise<void> {
  ctx.admission = { ticket: undefined, reservation: undefined };
  ctx.admission.ticket = await countResponse(deps, ctx, tokens);
  try {
    await reserve(deps, ctx, estimateUsd);
  } catch (err) {
    const ticket = ctx.admission.ticket;
    ctx.admission.ticket = undefined;
    if (ticket) await deps.stores.rateLimiter.adjust(ticket, 0).catch(() => undefined);
    throw err;
  }
}

async function countResponse(
  deps: PipelineDeps,
  ctx: RequestContext,
  tokens: number,
): Promise<RateTicket | undefined> {
  const limits = ctx.key.spec.rateLimit;
  if (!limits) return undefined;
  let decision;
  try {
    decision = await deps.stores.rateLimiter.acquire(
      { tenant: ctx.tenant.name, keyId: ctx.key.id },
      limits,
      tokens,
    );
  } catch (err) {
    if (isStoreUnavailable(err))
      throw new GatewayError(
        'service_unavailable',
        'the rate limiter is unavailable; the response was not started',
      );
    throw err;
  }
  if (decision.allowed) return decision.ticket;
  const wait = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
  const message = decision.tokensExceedLimit
    ? `this response needs about ${tokens} tokens, more than this key's limit of ${limits.tokensPerMinute} tokens per minute; lower max_output_tokens`
    : decision.requests && !decision.requests.allowed
      ? `rate limit exceeded: ${limits.requestsPerMinute} requests per minute for this key (each response is one); retry after ${wait}s`
      : `rate limit exceeded: ${limits.tokensPerMinute} tokens per minute for this key; this response needs about ${tokens}; retry after ${wait}s`;
  throw new GatewayError('rate_limit_exceeded', message);
}

/** Reserves `estimateUsd` on the key's budget (nothing to do for a key without one). */
async function reserve(deps: PipelineDeps, ctx: RequestContext, estimateUsd: number): Promise<void> {
  const budget = ctx.key.spec.budget;
  if (!budget) return;
  const key = { tenant: ctx.tenant.name, keyId: ctx.key.id };
  let result;
  try {
    result = await deps.stores.budgets.reserve({
      tenant: key.tenant,
      keyId: key.keyId,
      budget,
      estimateUsd,
      autoRecharge: ctx.key.spec.autoRecharge?.enabled ? ctx.key.spec.autoRecharge : undefined,
      reference: ctx.id,
    });
  } catch (err) {
    if (isStoreUnavailable(err))
      throw new GatewayError(
        'service_unavailable',
        'the budget store is unavailable; the response was not started',
      );
    throw err;
  }
  // The HTTP 402's helper: a response refused for money its batches or jobs hold says so too.
  if (!result.ok)
    throw await budgetRefusal(deps.stores.budgets, key, budget, estimateUsd, result.remainingUsd, 'response');
  ctx.admission = { ticket: ctx.admission?.ticket, reservation: result.reservation };
}

export interface ResponseOutcome {
  status: number;
  errorType?: string | undefined;
  deployment: Deployment;
  attempts: number;
  promptTokens: number;
  completionTokens: number;
  costUsd: number;
}

/** Charges the hold with what the response cost and writes its usage record. */
export function settleResponse(deps: PipelineDeps, ctx: RequestContext, o: ResponseOutcome): Promise<void> {
  return settle(deps, ctx, {
    status: o.status,
    errorType: o.errorType,
    deployment: o.deployment,
    attempts: o.attempts,
    usage: { prompt_tokens: o.promptTokens, completion_tokens: o.completionTokens },
    costUsd: o.costUsd,
  });
}
