/**
 * A chat completion, in SPEC.md's lifecycle order. Stages that later issues add
 * (guardrails, semantic cache, compression, difficulty routing) slot in before `forward`.
 */
import { GatewayError } from '../errors.ts';
import type { Deployment } from '../config/snapshot.ts';
import type { ChatCompletion, ChatRequest, Usage } from '../formats/openai/types.ts';
import { costUsd } from '../accounting/cost.ts';
import { estimatedUsage } from '../accounting/tokens.ts';
import { chatCall } from '../router/calls.ts';
import type { AttemptLog } from '../router/router.ts';
import { mayUse, type RequestContext } from './context.ts';
import { callContext, continuation, openStream, routeRequest, type ForwardDeps } from './forward.ts';
import { routeByDifficulty } from './routing/stage.ts';
import { relayStream, type StreamEnd, type StreamMeta } from './stream-relay.ts';
import { checkCapabilities, inspectChat } from './validate.ts';
import type { ChatChunk } from '../formats/openai/types.ts';

export interface Served {
  deployment: Deployment;
  log: AttemptLog;
}

export type ChatOutcome =
  | (Served & { kind: 'completion'; completion: ChatCompletion; usage: Usage; costUsd: number })
  | (Served & {
      kind: 'stream';
      meta: StreamMeta;
      chunks: AsyncGenerator<ChatChunk, StreamEnd>;
      /** Usage (estimated when the provider gave none) and cost of a finished stream. */
      settle(end: StreamEnd): { usage: Usage; costUsd: number };
    });

export function modelNotEnabled(model: string): GatewayError {
  return new GatewayError('model_not_found', `model ${model} does not exist or is not enabled for this key`, {
    param: 'model',
  });
}

export async function runChat(deps: ForwardDeps, ctx: RequestContext, req: ChatRequest): Promise<ChatOutcome> {
  const route = ctx.snapshot.models.get(req.model);
  if (!route || !mayUse(ctx, req.model)) throw modelNotEnabled(req.model);
  const needs = inspectChat(req);
  checkCapabilities(route, 'chat', needs);

  const routed = routeByDifficulty(ctx, req, needs.capabilities);
  Object.assign(ctx.responseHeaders, routed.headers);
  req = routed.req;

  const routing = routeRequest(ctx, req.model, needs.capabilities);

  if (!req.stream) {
    const routed = await deps.router.execute(routing, (d) => chatCall(callContext(deps, ctx, d), req));
    const completion = { ...routed.value, model: routed.deployment.model };
    const usage = completion.usage ?? estimatedUsage(req, completion.choices[0]?.message.content ?? '');
    completion.usage = usage;
    return {
      kind: 'completion',
      completion,
      usage,
      costUsd: costUsd(routed.deployment.pricing, usage),
      deployment: routed.deployment,
      log: routed.log,
    };
  }

  const pending: StreamMeta = { id: `chatcmpl-${ctx.id}`, created: Math.floor(Date.now() / 1000), model: req.model };
  const first = await openStream(deps, ctx, routing, req, pending);
  const meta = { ...pending, model: first.deployment.model };
  return {
    kind: 'stream',
    meta,
    deployment: first.deployment,
    log: first.log,
    chunks: relayStream(first, meta, continuation(deps, ctx, routing, req, meta)),
    settle(end) {
      const usage = end.outcome === 'complete' && end.usage ? end.usage : estimatedUsage(req, end.text);
      return { usage, costUsd: costUsd(end.deployment.pricing, usage) };
    },
  };
}
