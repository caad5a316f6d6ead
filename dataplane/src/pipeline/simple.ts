/**
 * Endpoints without the chat stages: embeddings and legacy completions go straight from
 * access checks to the router.
 */
import type { Capability } from '@gantry/crds';
import { costUsd } from '../accounting/cost.ts';
import { estimateTextTokens } from '../accounting/tokens.ts';
import type { CompletionRequest, CompletionResponse, EmbeddingRequest, EmbeddingResponse, Usage } from '../formats/openai/types.ts';
import { completionsCall, embeddingsCall, sendOk } from '../router/calls.ts';
import { UpstreamFailure, type UpstreamResponse } from '../router/upstream.ts';
import { modelNotEnabled, type Served } from './chat.ts';
import { mayUse, type RequestContext } from './context.ts';
import { callContext, routeRequest, type ForwardDeps } from './forward.ts';
import { checkCapabilities, type Endpoint } from './validate.ts';

function admit(ctx: RequestContext, model: string, endpoint: Endpoint, needs: Capability[]) {
  const route = ctx.snapshot.models.get(model);
  if (!route || !mayUse(ctx, model)) throw modelNotEnabled(model);
  checkCapabilities(route, endpoint, undefined);
  return routeRequest(ctx, model, needs);
}

export async function runEmbeddings(
  deps: ForwardDeps,
  ctx: RequestContext,
  req: EmbeddingRequest,
): Promise<Served & { response: EmbeddingResponse; costUsd: number }> {
  const routing = admit(ctx, req.model, 'embeddings', ['embeddings']);
  const routed = await deps.router.execute(routing, (d) => embeddingsCall(callContext(deps, ctx, d), req));
  const response = { ...routed.value, model: routed.deployment.model };
  const usage = { prompt_tokens: response.usage.prompt_tokens, completion_tokens: 0 };
  return { response, costUsd: costUsd(routed.deployment.pricing, usage), deployment: routed.deployment, log: routed.log };
}

export type CompletionOutcome =
  | (Served & { kind: 'completion'; response: CompletionResponse; costUsd: number })
  | (Served & { kind: 'stream'; upstream: UpstreamResponse; usageOf: (event: { data: string }) => Usage | undefined });

export async function runCompletions(
  deps: ForwardDeps,
  ctx: RequestContext,
  req: CompletionRequest,
): Promise<CompletionOutcome> {
  const routing = admit(ctx, req.model, 'completions', req.stream ? ['completions', 'streaming'] : ['completions']);
  if (!req.stream) {
    const routed = await deps.router.execute(routing, (d) => completionsCall(callContext(deps, ctx, d), req));
    const response = { ...routed.value, model: routed.deployment.model };
    const usage = response.usage ?? {
      prompt_tokens: estimateTextTokens([req.prompt].flat().join('')),
      completion_tokens: estimateTextTokens(response.choices.map((c) => c.text).join('')),
    };
    return { kind: 'completion', response, costUsd: costUsd(routed.deployment.pricing, usage), deployment: routed.deployment, log: routed.log };
  }
  const routed = await deps.router.execute(routing, (d) => {
    const call = callContext(deps, ctx, d);
    const adapter = call.adapter.completions;
    if (!adapter) throw new UpstreamFailure({ kind: 'bad_request', status: 0, message: 'completions not supported' });
    return sendOk(call, adapter.request(req, d.target), true);
  });
  const adapter = deps.adapters[routed.deployment.provider].completions!;
  return { kind: 'stream', upstream: routed.value, usageOf: adapter.streamUsage, deployment: routed.deployment, log: routed.log };
}
