/**
 * The router stage of a chat request: one call or one stream across the model's
 * deployments, then settlement on what was actually served.
 */
import type { Capability } from '@gantry/crds';
import { costUsd } from '../accounting/cost.ts';
import { boundedUsage } from '../accounting/reported-usage.ts';
import { estimatedUsage } from '../accounting/tokens.ts';
import type { Deployment } from '../config/snapshot.ts';
import type { ChatChunk, ChatCompletion, ChatRequest, Usage } from '../formats/openai/types.ts';
import { chatCall } from '../router/calls.ts';
import type { AttemptLog } from '../router/router.ts';
import { promptTokensOf, type RequestContext } from './context.ts';
import {
  callContext,
  continuation,
  missingObjects,
  openStream,
  routeRequest,
  type PipelineDeps,
} from './forward.ts';
import type { PinnedTo } from './resources/chat-files.ts';
import { guardResponse } from './guardrails/stage.ts';
import { settle } from './settlement.ts';
import { chargeStream, chatUsageBounds, hasContent, servedModels } from './stream-charge.ts';
import { chatPromptCharge, watchSent } from './unanswered-call.ts';
import { relayStream, type StreamEnd, type StreamMeta, type StreamSettlement } from './stream-relay.ts';

export interface Served {
  /** The deployment that served; undefined when the semantic cache did. */
  deployment: Deployment | undefined;
  log: AttemptLog;
}

export type ChatOutcome =
  | (Served & { kind: 'completion'; completion: ChatCompletion; usage: Usage; costUsd: number })
  | (Served & {
      kind: 'stream';
      meta: StreamMeta;
      /** The client's chunks, those that travel together (one upstream read) in one step. */
      chunks: AsyncGenerator<ChatChunk[], StreamEnd>;
      /**
       * Usage (estimated when the provider gave none) and cost of an ended stream, settled.
       * A stream the client abandoned is charged for what was produced; one that failed
       * upstream is not charged.
       */
      settle(end: StreamEnd, clientGone: boolean): Promise<StreamSettlement>;
    });

/** Hands a complete answer on (the semantic cache stores it for future hits). */
export type OnAnswer = (completion: ChatCompletion) => Promise<void>;

export async function forwardChat(
  deps: PipelineDeps,
  ctx: RequestContext,
  req: ChatRequest,
  needs: readonly Capability[],
  onAnswer: OnAnswer | undefined,
  /** The only deployment that may serve: it holds files the conversation names. */
  pinned?: PinnedTo,
): Promise<ChatOutcome> {
  const routing = pinned
    ? {
        ...routeRequest(ctx, req.model, needs),
        filter: (d: Deployment) => d.name === pinned.deployment.name,
        missingObject: missingObjects(ctx, pinned.objects),
      }
    : routeRequest(ctx, req.model, needs);
  if (!req.stream) {
    const routed = await deps.router.execute(
      routing,
      watchSent(ctx, chatPromptCharge(ctx, req), (d, onSent) =>
        chatCall(callContext(deps, ctx, d, onSent), req),
      ),
    );
    const answer = { ...routed.value, model: routed.deployment.model };
    const bounds = chatUsageBounds(req, promptTokensOf(ctx, req), routed.deployment, hasContent(answer));
    const usage =
      (answer.usage && boundedUsage(answer.usage, bounds)) ??
      estimatedUsage(req, answer.choices[0]?.message.content ?? '');
    answer.usage = usage;
    const cost = costUsd(routed.deployment.pricing, usage);
    // The provider did the work, so an answer the guardrails then refuse is still charged.
    let completion: ChatCompletion | undefined;
    let refusal: unknown;
    try {
      completion = guardResponse(ctx, answer);
    } catch (err) {
      refusal = err;
    }
    await settle(deps, ctx, {
      status: refusal ? 403 : 200,
      errorType: refusal ? 'guardrail_blocked' : undefined,
      deployment: routed.deployment,
      attempts: routed.log.attempts,
      usage,
      costUsd: cost,
    });
    if (!completion) throw refusal;
    await onAnswer?.(completion);
    return {
      kind: 'completion',
      completion,
      usage,
      costUsd: cost,
      deployment: routed.deployment,
      log: routed.log,
    };
  }

  const pending: StreamMeta = {
    id: `chatcmpl-${ctx.id}`,
    created: Math.floor(Date.now() / 1000),
    model: req.model,
  };
  // A stream left before its first token is charged as a call left unanswered (the relay
  // charges one left later on what it delivered).
  const first = await openStream(deps, ctx, routing, req, pending, true);
  const meta = { ...pending, model: first.deployment.model };
  return {
    kind: 'stream',
    meta,
    deployment: first.deployment,
    log: first.log,
    chunks: relayStream(
      first,
      meta,
      continuation(deps, ctx, routing, req, meta),
      ctx.signal,
      (part, failure) => deps.router.streamEnded(part, failure),
    ),
    async settle(end, clientGone) {
      if (end.outcome === 'failed' && !clientGone) deps.metrics.streamFailures.inc({ model: meta.model });
      const billed = end.outcome === 'complete' || clientGone;
      const charge = chargeStream(req, end.parts, billed, promptTokensOf(ctx, req));
      const { usage } = charge;
      await settle(deps, ctx, {
        // A client gone before the answer's end never had it, even when the upstream finished
        // (as the stream writer answers): a queued pipelined stream's reads can end cleanly
        // once its client left. It is still billed for what was produced.
        status: clientGone ? 499 : end.outcome === 'complete' ? 200 : 502,
        errorType: clientGone
          ? 'client_closed_request'
          : end.outcome === 'complete'
            ? undefined
            : 'upstream_error',
        deployment: end.deployment,
        parts: charge.parts,
        attempts: end.log.attempts,
        usage: billed ? usage : undefined,
        costUsd: charge.costUsd,
      });
      if (end.outcome === 'complete' && onAnswer) await onAnswer(streamedAnswer(meta, end, usage));
      return {
        usage,
        costUsd: charge.costUsd,
        providers: end.parts.map((p) => p.deployment.name),
        model: servedModels(end.parts),
      };
    },
  };
}

/** A finished stream as the completion it amounts to (text answers; tool calls are not kept). */
function streamedAnswer(
  meta: StreamMeta,
  end: Extract<StreamEnd, { outcome: 'complete' }>,
  usage: Usage,
): ChatCompletion {
  return {
    id: meta.id,
    object: 'chat.completion',
    created: meta.created,
    model: meta.model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: end.text },
        finish_reason: end.finishReason ?? 'stop',
      },
    ],
    usage,
  };
}
