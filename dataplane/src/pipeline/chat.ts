/**
 * A chat completion, in SPEC.md's lifecycle order. Stages that later issues add
 * (guardrails, semantic cache, compression, difficulty routing) slot in before `forward`.
 */
import { GatewayError } from '../errors.ts';
import type { Deployment } from '../config/snapshot.ts';
import type { ChatCompletion, ChatRequest, Usage } from '../formats/openai/types.ts';
import { costUsd } from '../accounting/cost.ts';
import { estimatedUsage, estimatePromptTokens } from '../accounting/tokens.ts';
import { chatCall } from '../router/calls.ts';
import type { AttemptLog } from '../router/router.ts';
import { mayUse, type RequestContext } from './context.ts';
import { admit } from './admission.ts';
import { callContext, continuation, openStream, routeRequest, type PipelineDeps } from './forward.ts';
import { settle } from './settlement.ts';
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
      /**
       * Usage (estimated when the provider gave none) and cost of an ended stream, settled.
       * A stream the client abandoned is charged for what was produced; one that failed
       * upstream is not charged.
       */
      settle(end: StreamEnd, clientGone: boolean): Promise<{ usage: Usage; costUsd: number }>;
    });

export function modelNotEnabled(model: string): GatewayError {
  return new GatewayError('model_not_found', `model ${model} does not exist or is not enabled for this key`, {
    param: 'model',
  });
}

export async function runChat(
  deps: PipelineDeps,
  ctx: RequestContext,
  req: ChatRequest,
  endpoint: 'chat' | 'messages',
): Promise<ChatOutcome> {
  Object.assign(ctx.usage, { endpoint, requestedModel: req.model, stream: req.stream === true });
  const route = ctx.snapshot.models.get(req.model);
  if (!route || !mayUse(ctx, req.model)) throw modelNotEnabled(req.model);
  const needs = inspectChat(req);
  checkCapabilities(route, 'chat', needs);
  ctx.admission = await admit(deps.stores, ctx, route, () => estimatePromptTokens(req), req.max_completion_tokens ?? req.max_tokens);

  const routed = routeByDifficulty(ctx, req, needs.capabilities);
  Object.assign(ctx.responseHeaders, routed.headers);
  if (routed.decision)
    ctx.usage.routing = { level: routed.decision.level, model: routed.decision.model, effort: routed.decision.effortInjected };
  req = routed.req;

  const routing = routeRequest(ctx, req.model, needs.capabilities);

  if (!req.stream) {
    const routed = await deps.router.execute(routing, (d) => chatCall(callContext(deps, ctx, d), req));
    const completion = { ...routed.value, model: routed.deployment.model };
    const usage = completion.usage ?? estimatedUsage(req, completion.choices[0]?.message.content ?? '');
    completion.usage = usage;
    const cost = costUsd(routed.deployment.pricing, usage);
    await settle(deps, ctx, { status: 200, deployment: routed.deployment, attempts: routed.log.attempts, usage, costUsd: cost });
    return { kind: 'completion', completion, usage, costUsd: cost, deployment: routed.deployment, log: routed.log };
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
    async settle(end, clientGone) {
      const usage = end.outcome === 'complete' && end.usage ? end.usage : estimatedUsage(req, end.text);
      const billed = end.outcome === 'complete' || clientGone;
      const cost = billed ? costUsd(end.deployment.pricing, usage) : 0;
      await settle(deps, ctx, {
        status: end.outcome === 'complete' ? 200 : clientGone ? 499 : 502,
        errorType: end.outcome === 'complete' ? undefined : clientGone ? 'client_closed_request' : 'upstream_error',
        deployment: end.deployment,
        attempts: end.log.attempts,
        usage: billed ? usage : undefined,
        costUsd: cost,
      });
      return { usage, costUsd: cost };
    },
  };
}
