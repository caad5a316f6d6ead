/**
 * What a Realtime request owes before it is served, whether it opens a session or mints a
 * client secret for one: one request on the key's rate limit, and a key whose budget cannot
 * pay for one output token is refused (402). The session's responses then hold their own money.
 */
import type { ModelRoute } from '../config/snapshot.ts';
import { admit } from '../pipeline/admission.ts';
import type { RequestContext } from '../pipeline/context.ts';
import type { PipelineDeps } from '../pipeline/forward.ts';
import { responseEstimateUsd } from './cost.ts';

export async function admitRealtime(
  deps: PipelineDeps,
  ctx: RequestContext,
  route: ModelRoute,
): Promise<void> {
  const oneToken = (): number =>
    Math.max(0, ...route.deployments.map((d) => responseEstimateUsd(d.pricing, 0, 1)));
  const admission = await admit(
    deps,
    ctx,
    () => [route],
    () => 0,
    { maxTokens: 1 },
    oneToken,
  );
  // The check was the point: nothing is held, so nothing is left to settle but the ticket.
  if (admission.reservation) await deps.stores.budgets.release(admission.reservation).catch(() => undefined);
  ctx.admission = { ticket: admission.ticket, reservation: undefined };
}
