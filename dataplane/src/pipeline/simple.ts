/**
 * Endpoints without the chat stages: embeddings and legacy completions go straight from
 * access checks to the router.
 */
import type { Capability } from '@gantry/crds';
import { costUsd } from '../accounting/cost.ts';
import { estimateTextTokens } from '../accounting/tokens.ts';
import type {
  CompletionRequest,
  CompletionResponse,
  EmbeddingRequest,
  EmbeddingResponse,
  Usage,
} from '../formats/openai/types.ts';
import { completionsCall, embeddingsCall, sendOk } from '../router/calls.ts';
import { UpstreamFailure, type UpstreamResponse } from '../router/upstream.ts';
import { admit } from './admission.ts';
import type { Served } from './chat.ts';
import { settle } from './settlement.ts';
import { accessibleRoute, reachableRoutes, type RequestContext } from './context.ts';
import { callContext, routeRequest, type PipelineDeps } from './forward.ts';
import { checkCapabilities, type Endpoint } from './validate.ts';

/** Access, capability, rate limit and budget; then the route for the router. */
async function prepare(
  deps: PipelineDeps,
  ctx: RequestContext,
  req: { model: string; stream?: boolean | undefined; max_tokens?: number | undefined },
  endpoint: Endpoint,
  needs: Capability[],
  promptTokens: () => number,
) {
  Object.assign(ctx.usage, { endpoint, requestedModel: req.model, stream: req.stream === true });
  checkCapabilities(accessibleRoute(ctx, req.model), endpoint, undefined);
  ctx.admission = await admit(
    deps.stores,
    ctx,
    () => reachableRoutes(ctx, req.model),
    promptTokens,
    endpoint === 'embeddings' ? 0 : req.max_tokens,
  );
  return routeRequest(ctx, req.model, needs);
}

const inputText = (input: EmbeddingRequest['input']): string =>
  typeof input === 'string' ? input : input.map((x) => (typeof x === 'string' ? x : '')).join('\n');

export async function runEmbeddings(
  deps: PipelineDeps,
  ctx: RequestContext,
  req: EmbeddingRequest,
): Promise<Served & { response: EmbeddingResponse; costUsd: number }> {
  const routing = await prepare(deps, ctx, req, 'embeddings', ['embeddings'], () =>
    estimateTextTokens(inputText(req.input)),
  );
  const routed = await deps.router.execute(routing, (d) => embeddingsCall(callContext(deps, ctx, d), req));
  const response = { ...routed.value, model: routed.deployment.model };
  const usage = {
    prompt_tokens: response.usage.prompt_tokens || estimateTextTokens(inputText(req.input)),
    completion_tokens: 0,
  };
  const cost = costUsd(routed.deployment.pricing, usage);
  await settle(deps, ctx, {
    status: 200,
    deployment: routed.deployment,
    attempts: routed.log.attempts,
    usage,
    costUsd: cost,
  });
  return { response, costUsd: cost, deployment: routed.deployment, log: routed.log };
}

export type CompletionOutcome =
  | (Served & { kind: 'completion'; response: CompletionResponse; costUsd: number })
  | (Served & {
      kind: 'stream';
      upstream: UpstreamResponse;
      usageOf: (event: { data: string }) => Usage | undefined;
      /**
       * Charge what the stream reported (or counted tokens when it reported nothing); a stream
       * that failed upstream is not charged, one the client left is charged for what was produced.
       */
      settle(
        usage: Usage | undefined,
        completionText: string,
        ending: 'complete' | 'client_gone' | 'failed',
      ): Promise<number>;
    });

export async function runCompletions(
  deps: PipelineDeps,
  ctx: RequestContext,
  req: CompletionRequest,
): Promise<CompletionOutcome> {
  const promptText = [req.prompt].flat().join('');
  const routing = await prepare(
    deps,
    ctx,
    req,
    'completions',
    req.stream ? ['completions', 'streaming'] : ['completions'],
    () => estimateTextTokens(promptText),
  );
  if (!req.stream) {
    const routed = await deps.router.execute(routing, (d) => completionsCall(callContext(deps, ctx, d), req));
    const response = { ...routed.value, model: routed.deployment.model };
    const usage = response.usage ?? {
      prompt_tokens: estimateTextTokens(promptText),
      completion_tokens: estimateTextTokens(response.choices.map((c) => c.text).join('')),
    };
    const cost = costUsd(routed.deployment.pricing, usage);
    await settle(deps, ctx, {
      status: 200,
      deployment: routed.deployment,
      attempts: routed.log.attempts,
      usage,
      costUsd: cost,
    });
    return { kind: 'completion', response, costUsd: cost, deployment: routed.deployment, log: routed.log };
  }
  const routed = await deps.router.execute(routing, (d) => {
    const call = callContext(deps, ctx, d);
    const adapter = call.adapter.completions;
    if (!adapter)
      throw new UpstreamFailure({ kind: 'bad_request', status: 0, message: 'completions not supported' });
    return sendOk(call, adapter.request(req, d.target), true);
  });
  const adapter = deps.adapters[routed.deployment.provider].completions!;
  return {
    kind: 'stream',
    upstream: routed.value,
    usageOf: adapter.streamUsage,
    deployment: routed.deployment,
    log: routed.log,
    async settle(reported, completionText, clientGone) {
      const usage = reported ?? {
        prompt_tokens: estimateTextTokens(promptText),
        completion_tokens: estimateTextTokens(completionText),
      };
      const cost = costUsd(routed.deployment.pricing, usage);
      await settle(deps, ctx, {
        status: clientGone ? 499 : 200,
        deployment: routed.deployment,
        attempts: routed.log.attempts,
        usage,
        costUsd: cost,
      });
      return cost;
    },
  };
}
