/**
 * Requests that read what the gateway or a provider stores (a stored response, its input
 * items, a token count, a video job) call no model, but each still loads data for its key:
 * they count against the key's request rate like every request, before the lookup (an unknown
 * id too), and are recorded at no cost. No tokens are counted against the limit and no money
 * is held.
 */
import type { UsageEndpoint } from '../accounting/usage.ts';
import { admitRequest } from './admission.ts';
import type { RequestContext } from './context.ts';
import type { PipelineDeps } from './forward.ts';
import { settle } from './settlement.ts';

/** What the read is, for its record: noted before any lookup can refuse it. */
export function describeRead(ctx: RequestContext, endpoint: UsageEndpoint, model = ''): void {
  Object.assign(ctx.usage, { endpoint, requestedModel: model, stream: false });
}

export async function admitRead(
  deps: PipelineDeps,
  ctx: RequestContext,
  endpoint: UsageEndpoint,
  model = '',
): Promise<void> {
  describeRead(ctx, endpoint, model);
  // The request count only: a $0 hold is refused once a key's budget is spent, and a key that
  // spent it all may still read what it stored.
  ctx.admission = await admitRequest(deps, ctx);
}

/** The read answered: recorded at $0 (a refusal is settled by the error handler instead). */
export const settleRead = (deps: PipelineDeps, ctx: RequestContext): Promise<void> =>
  settle(deps, ctx, { status: 200, costUsd: 0 });
