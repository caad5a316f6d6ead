/**
 * The tenant's routing policy applied to a classified request: which model and reasoning
 * effort the request goes to. Pure, so every branch is a table row in the tests.
 */
import type { TenantSpec } from '@gantry/crds';
import type { DifficultyLevel } from './classify.ts';

/** `Tenant.spec.routing.levels`: per level, a model and an optional reasoning effort. */
export type RoutingLevels = NonNullable<NonNullable<TenantSpec['routing']>['levels']>;

export interface RouteInput {
  level: DifficultyLevel;
  /** The model the client asked for; kept whenever routing does not apply. */
  requestedModel: string;
  /** Whether the calling key may use a model (tenant allow list narrowed by the key's). */
  allowedModels: (model: string) => boolean;
  levels?: RoutingLevels;
  /** `Tenant.spec.routing.enabled`. */
  enabled: boolean;
  /** The client sent `x-gantry-route: false`. */
  optOut: boolean;
}

export interface RouteDecision {
  level: DifficultyLevel;
  model: string;
  /** Reasoning effort to inject; only set when routing applied and the level names one. */
  effort?: string;
  applied: boolean;
  reason: string;
}

export function decideRoute(input: RouteInput): RouteDecision {
  const { level, requestedModel } = input;
  const keep = (reason: string): RouteDecision => ({ level, model: requestedModel, applied: false, reason });

  if (!input.enabled) return keep('routing disabled for the tenant');
  if (input.optOut) return keep('client opted out of routing');
  const target = input.levels?.[level];
  if (!target) return keep(`no model configured for level ${level}`);
  // A key must never reach a model it may not use; the client's own model was already
  // checked by auth, so falling back to it is always safe.
  if (!input.allowedModels(target.model))
    return keep(`level ${level} model ${target.model} is not allowed for this key`);

  const decision: RouteDecision = {
    level,
    model: target.model,
    applied: true,
    reason:
      target.model === requestedModel
        ? `level ${level} keeps ${requestedModel}`
        : `level ${level} routes ${requestedModel} to ${target.model}`,
  };
  if (target.reasoningEffort) decision.effort = target.reasoningEffort;
  return decision;
}
