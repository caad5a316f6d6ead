/**
 * The difficulty-routing stage: classify, apply the tenant's policy, inject the effort for
 * models that reason. Skipped when the tenant has routing off or the client sends
 * `x-gantry-route: false`.
 */
import type { Capability } from '@gantry/crds';
import { RequestHeaders, ResponseHeaders } from '../../brand.ts';
import type { ChatRequest } from '../../formats/openai/types.ts';
import { mayUse, type RequestContext } from '../context.ts';
import { classifyDifficulty } from './classify.ts';
import { injectReasoningEffort } from './effort.ts';
import { decideRoute, type RouteDecision } from './policy.ts';

export interface RoutingResult {
  req: ChatRequest;
  headers: Record<string, string>;
  /** What the usage record keeps; undefined when routing did not run. */
  decision: (RouteDecision & { effortInjected: string | undefined }) | undefined;
}

/**
 * `needs`: capabilities the request requires; a level model that lacks one is not allowed,
 * so routing never sends an image to a text-only model.
 */
/** The models routing may send this request to (none when routing will not run). */
export function routingCandidates(ctx: RequestContext): string[] {
  const policy = ctx.tenant.spec.routing;
  if (!policy?.enabled || ctx.requestHeaders[RequestHeaders.route] === 'false') return [];
  return Object.values(policy.levels ?? {}).map((l) => l.model);
}

/**
 * The reasoning efforts routing may inject into `req`: a level's, when its model reasons and
 * the caller named none (the caller's own wins, `injectReasoningEffort`). For the hold.
 */
export function routingEfforts(ctx: RequestContext, req: Pick<ChatRequest, 'reasoning_effort'>): string[] {
  const policy = ctx.tenant.spec.routing;
  if (req.reasoning_effort !== undefined) return [];
  if (!policy?.enabled || ctx.requestHeaders[RequestHeaders.route] === 'false') return [];
  const efforts: string[] = [];
  for (const level of Object.values(policy.levels ?? {}))
    if (level.reasoningEffort && ctx.snapshot.models.get(level.model)?.capabilities.has('reasoning'))
      efforts.push(level.reasoningEffort);
  return efforts;
}

export function routeByDifficulty(
  ctx: RequestContext,
  req: ChatRequest,
  needs: readonly Capability[],
): RoutingResult {
  const policy = ctx.tenant.spec.routing;
  const optOut = ctx.requestHeaders[RequestHeaders.route] === 'false';
  if (!policy?.enabled || optOut) return { req, headers: {}, decision: undefined };

  const difficulty = classifyDifficulty(req);
  const decision = decideRoute({
    level: difficulty.level,
    requestedModel: req.model,
    allowedModels: (m) =>
      mayUse(ctx, m) && needs.every((c) => ctx.snapshot.models.get(m)?.capabilities.has(c)),
    levels: policy.levels,
    enabled: true,
    optOut: false,
  });
  ctx.log.debug(
    {
      difficulty: difficulty.level,
      score: difficulty.score,
      reasons: difficulty.reasons,
      decision: decision.reason,
    },
    'difficulty routing',
  );

  const reasons = ctx.snapshot.models.get(decision.model)?.capabilities.has('reasoning') ?? false;
  const routed = decision.model === req.model ? req : { ...req, model: decision.model };
  const out = decision.effort ? injectReasoningEffort(routed, decision.effort, reasons) : routed;
  const effortInjected = out.reasoning_effort !== req.reasoning_effort ? out.reasoning_effort : undefined;

  const headers: Record<string, string> = {
    [ResponseHeaders.routeLevel]: decision.level,
    [ResponseHeaders.routeModel]: decision.model,
  };
  if (effortInjected) headers[ResponseHeaders.routeEffort] = effortInjected;
  return { req: out, headers, decision: { ...decision, effortInjected } };
}
