/**
 * Where a new object goes. Objects live on one deployment and refer to each other only
 * there, so the choice is made in this order: the deployment that holds the objects the body
 * refers to; else the deployments of the body's `model` (or the `x-gantry-model` header);
 * else the caller's first model (lowest priority, then name) with a deployment able to hold
 * the family. Pure.
 */
import type { Capability } from '@gantry/crds';
import type { Deployment, ModelRoute } from '../../config/snapshot.ts';
import { GatewayError, invalidParam } from '../../errors.ts';

export type Placement =
  /** Any capable deployment of this model, in the router's order with failover. */
  | { kind: 'model'; model: string }
  /** Exactly this deployment: the objects referred to live there. */
  | { kind: 'pinned'; deployment: Deployment; field: string };

export interface PlacementInput {
  models: ReadonlyMap<string, ModelRoute>;
  allowed: (model: string) => boolean;
  capability: Capability;
  /** What errors call the family ("vector stores"). */
  what: string;
  requestedModel?: string | undefined;
  /** The deployment the referenced objects are on, and the first field that named one. */
  pinned?: { deployment: Deployment; field: string } | undefined;
  /** The error for a requested model with no route the caller may use (default: a 404). */
  unknown?: ((model: string) => GatewayError) | undefined;
}

const capable = (d: Deployment, c: Capability) => d.capabilities.has(c);

export function placement(input: PlacementInput): Placement {
  const { models, allowed, capability, requestedModel, pinned } = input;
  if (requestedModel !== undefined) {
    const route = models.get(requestedModel);
    if (!route || !allowed(requestedModel))
      throw (
        input.unknown?.(requestedModel) ??
        new GatewayError(
          'model_not_found',
          `model ${requestedModel} does not exist or is not enabled for this key`,
          { param: 'model', refusedModel: requestedModel },
        )
      );
    if (!route.deployments.some((d) => capable(d, capability)))
      throw invalidParam(
        'model',
        `model ${requestedModel} has no deployment with the ${capability} capability, which ${input.what} need`,
      );
  }
  if (pinned) {
    if (!capable(pinned.deployment, capability))
      throw invalidParam(
        pinned.field,
        `refers to an object on deployment ${pinned.deployment.name}, which does not hold ${input.what} (no ${capability} capability)`,
      );
    if (requestedModel !== undefined && pinned.deployment.model !== requestedModel)
      throw invalidParam(
        pinned.field,
        `refers to an object held by model ${pinned.deployment.model}'s deployment, not model ${requestedModel}'s`,
      );
    return { kind: 'pinned', deployment: pinned.deployment, field: pinned.field };
  }
  if (requestedModel !== undefined) return { kind: 'model', model: requestedModel };
  let best: { model: string; priority: number } | undefined;
  for (const [model, route] of models) {
    if (!allowed(model)) continue;
    for (const d of route.deployments) {
      if (!capable(d, capability)) continue;
      if (!best || d.priority < best.priority || (d.priority === best.priority && model < best.model))
        best = { model, priority: d.priority };
    }
  }
  if (!best)
    throw new GatewayError(
      'unsupported_endpoint',
      `no model this key may use has a deployment with the ${capability} capability, which ${input.what} need`,
    );
  return { kind: 'model', model: best.model };
}

/** All referenced objects must sit on one deployment; the first field naming another is the error. */
export function commonDeployment(
  refs: readonly { field: string; deployment: string }[],
): { deployment: string; field: string } | undefined {
  const first = refs[0];
  if (!first) return undefined;
  for (const r of refs)
    if (r.deployment !== first.deployment)
      throw invalidParam(
        r.field,
        `is held by deployment ${r.deployment}, but ${first.field} by ${first.deployment}; objects used together must be on one deployment`,
      );
  return { deployment: first.deployment, field: first.field };
}
