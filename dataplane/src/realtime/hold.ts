/**
 * One Realtime response is one metered request: its own budget hold before it starts, its own
 * settlement and usage record when `response.done` reports what it used. The session's
 * connect was the rate-limited request; responses hold money only.
 */
import { randomUUID } from 'node:crypto';
import type { Deployment } from '../config/snapshot.ts';
import { GatewayError } from '../errors.ts';
import { budgetRefusal } from '../pipeline/budget-refusal.ts';
import { freshMetering, type RequestContext } from '../pipeline/context.ts';
import type { PipelineDeps } from '../pipeline/forward.ts';
import { settle } from '../pipeline/settlement.ts';
import { isStoreUnavailable } from '../stores/index.ts';

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

/** Reserves `estimateUsd` on the key's budget (nothing to do for a key without one). */
export async function holdResponse(
  deps: PipelineDeps,
  ctx: RequestContext,
  estimateUsd: number,
): Promise<void> {
  const budget = ctx.key.spec.budget;
  ctx.admission = { ticket: undefined, reservation: undefined };
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
  ctx.admission.reservation = result.reservation;
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
