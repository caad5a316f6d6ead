/**
 * The extraction call's own hold. It runs after the request's admission, on a model the
 * admission did not price, and its spend is settled with the request's: without a hold of its
 * own, a key near its limit (or one whose extraction model is dearer than its chat model)
 * spends past its budget. Held like any request: its counted prompt and its `max_tokens` at
 * the most any deployment the router may send it to can charge.
 */
import { estimateCost } from '../../accounting/estimate.ts';
import { estimatePromptTokens } from '../../accounting/tokens.ts';
import type { ModelRoute } from '../../config/snapshot.ts';
import type { ChatRequest } from '../../formats/openai/types.ts';
import type { Reservation, Stores } from '../../stores/index.ts';
import type { RequestContext } from '../context.ts';

export type ExtractionHold =
  { kind: 'unmetered' } | { kind: 'held'; reservation: Reservation } | { kind: 'refused'; problem: string };

/**
 * The models the router may serve the extraction from: the model, then the fallbacks the
 * tenant allows (the router's own chain for this call).
 */
export function extractionRoutes(
  ctx: Pick<RequestContext, 'snapshot' | 'tenant'>,
  model: string,
): ModelRoute[] {
  const route = ctx.snapshot.models.get(model);
  if (!route) return [];
  const allowed = (m: string) => ctx.tenant.models === undefined || ctx.tenant.models.has(m);
  const out = [route];
  for (const name of route.fallbacks) {
    const r = ctx.snapshot.models.get(name);
    if (r && name !== model && allowed(name)) out.push(r);
  }
  return out;
}

/**
 * Holds the extraction's worst case against the key's budget; a key without one has nothing to
 * overspend. Refused (the budget cannot hold it, or its store cannot be reached) means the
 * extraction is not made: compression is an optimisation, the request goes on uncompressed
 * within its own hold. Held on the budget as it stands, never by an auto-recharge.
 */
export async function holdExtraction(
  stores: Pick<Stores, 'budgets'>,
  ctx: RequestContext,
  model: string,
  xreq: ChatRequest,
): Promise<ExtractionHold> {
  const spec = ctx.key.spec;
  if (!spec.budget) return { kind: 'unmetered' };
  const estimate = estimateCost(extractionRoutes(ctx, model), estimatePromptTokens(xreq), {
    maxTokens: xreq.max_tokens ?? undefined,
  });
  try {
    const result = await stores.budgets.reserve({
      tenant: ctx.tenant.name,
      keyId: ctx.key.id,
      budget: spec.budget,
      estimateUsd: estimate.costUsd,
      // No auto-recharge: an optional call must never move wallet money. A key that cannot
      // hold the extraction skips it (the request goes on uncompressed) rather than top up.
      reference: `${ctx.id}:compression`,
    });
    if (result.ok) return { kind: 'held', reservation: result.reservation };
    return {
      kind: 'refused',
      problem: `the key's budget cannot hold the extraction (estimated at $${estimate.costUsd})`,
    };
  } catch (err) {
    return {
      kind: 'refused',
      problem: `the budget store could not hold the extraction: ${(err as Error).message}`,
    };
  }
}
