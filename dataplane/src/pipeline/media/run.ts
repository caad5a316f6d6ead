/**
 * The path every media request takes: model access and capability, admission on a per-unit
 * estimate, one attempt per deployment through the router, and settlement on the units the
 * upstream actually delivered.
 */
import type { Capability } from '@gantry/crds';
import type { UsageEndpoint } from '../../accounting/usage.ts';
import { GatewayError } from '../../errors.ts';
import type { MediaBody, MediaOperation } from '../../providers/types.ts';
import { sendOk, type CallContext } from '../../router/calls.ts';
import type { RouteRequest, Routed } from '../../router/router.ts';
import { UpstreamFailure, type UpstreamResponse } from '../../router/upstream.ts';
import { admit } from '../admission.ts';
import { accessibleRoute, reachableRoutes, type RequestContext } from '../context.ts';
import { callContext, routeRequest, type PipelineDeps } from '../forward.ts';
import { settle } from '../settlement.ts';
import { watchSent, type AbandonedCharge } from '../unanswered-call.ts';
import { estimateUnitCost, unitCostUsd, type Unit } from './pricing.ts';

export interface MediaRequest {
  endpoint: UsageEndpoint;
  /** The public path, for error messages. */
  path: string;
  model: string;
  capability: Capability;
  unit: Unit;
  /** Units the request may consume at most (images × size factor, seconds, characters). */
  estimateUnits: number;
  stream?: boolean;
}

/** Access, capability, rate limit and budget; the route for the router. */
export async function admitMedia(
  deps: PipelineDeps,
  ctx: RequestContext,
  req: MediaRequest,
): Promise<RouteRequest> {
  Object.assign(ctx.usage, {
    endpoint: req.endpoint,
    requestedModel: req.model,
    stream: req.stream === true,
  });
  const route = accessibleRoute(ctx, req.model);
  if (!route.capabilities.has(req.capability))
    throw new GatewayError(
      'unsupported_endpoint',
      `model ${req.model} does not support the ${req.path} endpoint`,
      {
        param: 'model',
      },
    );
  ctx.admission = await admit(
    deps,
    ctx,
    () => reachableRoutes(ctx, req.model),
    () => 0,
    { maxTokens: 0 },
    (routes) => estimateUnitCost(routes, req.unit, req.estimateUnits),
  );
  return routeRequest(ctx, req.model, [req.capability]);
}

/** One attempt: the adapter's request, sent; a non-2xx answer is an UpstreamFailure for the router. */
export function sendMedia(
  call: CallContext,
  op: MediaOperation,
  body: MediaBody,
  stream: boolean,
  id?: string,
): Promise<UpstreamResponse> {
  const media = call.adapter.media;
  if (!media)
    throw new UpstreamFailure({
      kind: 'bad_request',
      status: 0,
      message: `${call.deployment.provider} deployments do not serve /v1/${op}`,
    });
  return sendOk(call, media.request(op, body, call.deployment.target, id), stream);
}

/**
 * Run `attempt` on each candidate deployment until one answers. With `abandoned`, a client
 * that leaves once an attempt is on the wire is charged that (unanswered-call.ts).
 */
export function executeMedia<T>(
  deps: PipelineDeps,
  ctx: RequestContext,
  routing: RouteRequest,
  attempt: (call: CallContext) => Promise<T>,
  abandoned?: AbandonedCharge,
): Promise<Routed<T>> {
  if (!abandoned) return deps.router.execute(routing, (d) => attempt(callContext(deps, ctx, d)));
  return deps.router.execute(
    routing,
    watchSent(ctx, abandoned, (d, onSent) => attempt(callContext(deps, ctx, d, onSent))),
  );
}

/** `units` of `unit` at the deployment's price: what a media call left once sent is charged. */
export const unitsCharge =
  (unit: Unit, units: number): AbandonedCharge =>
  ({ pricing }) => ({ costUsd: unitCostUsd(pricing, unit, units) });

export { readJsonObject } from '../../router/calls.ts';

/** Charge the units delivered at the serving deployment's price; returns the cost. */
export async function settleMedia(
  deps: PipelineDeps,
  ctx: RequestContext,
  routed: Routed<unknown>,
  unit: Unit,
  units: number,
  status = 200,
  errorType?: string,
): Promise<number> {
  const cost = unitCostUsd(routed.deployment.pricing, unit, units);
  await settle(deps, ctx, {
    status,
    errorType,
    deployment: routed.deployment,
    attempts: routed.log.attempts,
    costUsd: cost,
  });
  return cost;
}
