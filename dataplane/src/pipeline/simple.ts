/**
 * Endpoints without the chat stages: embeddings and legacy completions go straight from
 * access checks to the router.
 */
import type { Capability } from '@gantry/crds';
import { costUsd } from '../accounting/cost.ts';
import type { OutputBound } from '../accounting/estimate.ts';
import { believableUsage, boundedUsage, type UsageBounds } from '../accounting/reported-usage.ts';
import { estimateTextTokens } from '../accounting/tokens.ts';
import type {
  CompletionRequest,
  CompletionResponse,
  EmbeddingRequest,
  EmbeddingResponse,
  Usage,
} from '../formats/openai/types.ts';
import type { Deployment } from '../config/snapshot.ts';
import type { CompletionStreamEvent, UpstreamError } from '../providers/types.ts';
import { completionsCall, embeddingsCall, sendOk } from '../router/calls.ts';
import { UpstreamFailure, type UpstreamResponse } from '../router/upstream.ts';
import { admit } from './admission.ts';
import type { Served } from './chat.ts';
import { settle, settleAnswered } from './settlement.ts';
import { accessibleRoute, reachableRoutes, type RequestContext } from './context.ts';
import { callContext, routeRequest, type PipelineDeps } from './forward.ts';
import { inputTokensCharge, watchSent } from './unanswered-call.ts';
import {
  checkCapabilities,
  checkCompletionChoices,
  checkOutputBound,
  completionSequences,
  type Endpoint,
} from './validate.ts';

/** Access, capability, output bounds, rate limit and budget; then the route for the router. */
async function prepare(
  deps: PipelineDeps,
  ctx: RequestContext,
  req: { model: string; stream?: boolean | undefined; max_tokens?: number | undefined },
  endpoint: Endpoint,
  needs: Capability[],
  promptTokens: () => number,
  output: OutputBound,
) {
  Object.assign(ctx.usage, { endpoint, requestedModel: req.model, stream: req.stream === true });
  const route = accessibleRoute(ctx, req.model);
  checkCapabilities(route, endpoint, undefined);
  if (endpoint === 'completions') checkOutputBound(route, 'max_tokens', req.max_tokens);
  ctx.admission = await admit(deps, ctx, () => reachableRoutes(ctx, req.model), promptTokens, output);
  return routeRequest(ctx, req.model, needs);
}

const inputText = (input: EmbeddingRequest['input']): string =>
  typeof input === 'string' ? input : input.map((x) => (typeof x === 'string' ? x : '')).join('\n');

/** Inputs given as token ids are counted as they are; text is tokenised. */
export function embeddingInputTokens(input: EmbeddingRequest['input']): number {
  if (typeof input === 'string') return estimateTextTokens(input);
  let ids = 0;
  for (const x of input)
    if (typeof x === 'number') ids += 1;
    else if (Array.isArray(x)) ids += x.length;
  return ids + estimateTextTokens(inputText(input));
}

export async function runEmbeddings(
  deps: PipelineDeps,
  ctx: RequestContext,
  req: EmbeddingRequest,
): Promise<Served & { response: EmbeddingResponse; costUsd: number }> {
  const routing = await prepare(
    deps,
    ctx,
    req,
    'embeddings',
    ['embeddings'],
    () => embeddingInputTokens(req.input),
    { maxTokens: 0 },
  );
  // Left once sent, the input is charged as the gateway counts it (the provider embedded it).
  const abandoned = inputTokensCharge(() => embeddingInputTokens(req.input));
  const routed = await deps.router.execute(
    routing,
    watchSent(ctx, abandoned, (d, onSent) => embeddingsCall(callContext(deps, ctx, d, onSent), req)),
  );
  const response = { ...routed.value, model: routed.deployment.model };
  const usage = {
    prompt_tokens: response.usage.prompt_tokens || embeddingInputTokens(req.input),
    completion_tokens: 0,
  };
  const cost = costUsd(routed.deployment.pricing, usage);
  await settleAnswered(deps, ctx, routed, cost, usage);
  return { response, costUsd: cost, deployment: routed.deployment, log: routed.log };
}

type StreamEnding = 'complete' | 'client_gone' | 'failed';

const counted = (prompt: number, completion: number): Usage => ({
  prompt_tokens: prompt,
  completion_tokens: completion,
  total_tokens: prompt + completion,
});

/** A legacy stream whose body broke, or ended without its `[DONE]`, without an error event. */
const STREAM_CUT: UpstreamError = { kind: 'network', status: 0, message: 'stream interrupted' };

/** How a legacy stream ended, as the status and error type of its usage record. */
export const STREAM_STATUS: Record<StreamEnding, number> = { complete: 200, client_gone: 499, failed: 502 };
const STREAM_ERROR: Record<StreamEnding, string | undefined> = {
  complete: undefined,
  client_gone: 'client_closed_request',
  failed: 'upstream_error',
};

export type CompletionOutcome =
  | (Served & { kind: 'completion'; response: CompletionResponse; costUsd: number })
  | (Served & {
      kind: 'stream';
      upstream: UpstreamResponse;
      /** One event's usage, error (classified) and text, from one parse. */
      readEvent: (data: string) => CompletionStreamEvent;
      /**
       * Charge what the stream reported (or counted tokens when it reported nothing); a stream
       * that failed upstream is not charged, one the client left is charged for what was produced.
       * Also the stream's verdict on its deployment: finished, or cut by `failure` (an error
       * event; a broken or unterminated body when undefined). A client that left gives none.
       */
      settle(
        usage: Usage | undefined,
        completionText: string,
        ending: StreamEnding,
        failure?: UpstreamError,
      ): Promise<number>;
    });

export async function runCompletions(
  deps: PipelineDeps,
  ctx: RequestContext,
  req: CompletionRequest,
): Promise<CompletionOutcome> {
  const promptText = [req.prompt].flat().join('');
  // Counted at most once: by admission (metered keys only), else when the answer is settled.
  let promptCount: number | undefined;
  const promptTokens = (): number => (promptCount ??= estimateTextTokens(promptText));
  checkCompletionChoices(req);
  const routing = await prepare(
    deps,
    ctx,
    req,
    'completions',
    req.stream ? ['completions', 'streaming'] : ['completions'],
    promptTokens,
    { maxTokens: req.max_tokens, sequences: completionSequences(req) },
  );
  /** What the request tells about the usage of an answer from `deployment`. */
  const completionBounds = (deployment: Deployment, answered: boolean): UsageBounds => ({
    promptTokens: promptTokens(),
    output: { maxTokens: req.max_tokens, sequences: completionSequences(req) },
    deployment,
    answered,
  });
  // Left once sent (a stream: before its headers), the prompt is charged, as for chat.
  const abandoned = inputTokensCharge(promptTokens);
  if (!req.stream) {
    const routed = await deps.router.execute(
      routing,
      watchSent(ctx, abandoned, (d, onSent) => completionsCall(callContext(deps, ctx, d, onSent), req)),
    );
    const response = { ...routed.value, model: routed.deployment.model };
    const answerText = response.choices.map((c) => c.text).join('');
    const believed =
      response.usage && boundedUsage(response.usage, completionBounds(routed.deployment, answerText !== ''));
    const usage = believed ?? counted(promptTokens(), estimateTextTokens(answerText));
    // The client is told what it was billed for, as for chat.
    response.usage = usage;
    const cost = costUsd(routed.deployment.pricing, usage);
    await settleAnswered(deps, ctx, routed, cost, usage);
    return { kind: 'completion', response, costUsd: cost, deployment: routed.deployment, log: routed.log };
  }
  // The stream's verdict on its deployment comes at its end (`settle` reports it).
  const routed = await deps.router.execute(
    { ...routing, verdictAtEnd: true },
    watchSent(ctx, abandoned, (d, onSent) => {
      const call = callContext(deps, ctx, d, onSent);
      const adapter = call.adapter.completions;
      if (!adapter)
        throw new UpstreamFailure({ kind: 'bad_request', status: 0, message: 'completions not supported' });
      return sendOk(call, adapter.request(req, d.target), true);
    }),
  );
  const adapter = deps.adapters[routed.deployment.provider].completions!;
  return {
    kind: 'stream',
    upstream: routed.value,
    readEvent: adapter.streamEvent,
    deployment: routed.deployment,
    log: routed.log,
    async settle(reported, completionText, ending, failure) {
      // An error event before a clean end (vLLM sends [DONE] after one) is still the stream's verdict.
      if (ending === 'failed' || (ending === 'complete' && failure))
        deps.router.streamEnded(routed, failure ?? STREAM_CUT);
      else if (ending === 'complete') deps.router.streamEnded(routed, undefined);
      const believed = believableUsage(reported);
      const usage = (believed &&
        boundedUsage(believed, completionBounds(routed.deployment, completionText !== ''))) ?? {
        prompt_tokens: promptTokens(),
        completion_tokens: estimateTextTokens(completionText),
      };
      // Same rule as chat streams: a stream the provider broke is not billed; one the client left is.
      const billed = ending !== 'failed';
      if (!billed) deps.metrics.streamFailures.inc({ model: routed.deployment.model });
      const cost = billed ? costUsd(routed.deployment.pricing, usage) : 0;
      await settle(deps, ctx, {
        status: STREAM_STATUS[ending],
        errorType: STREAM_ERROR[ending],
        deployment: routed.deployment,
        attempts: routed.log.attempts,
        usage: billed ? usage : undefined,
        costUsd: cost,
      });
      return cost;
    },
  };
}
