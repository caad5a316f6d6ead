/**
 * Serving a semantic-cache hit: the stored answer (DIRECT, REUSE) or its adaptation by the
 * policy's cheaper model (TWEAK), as a completion or replayed as a stream. The caller pays
 * the call the hit replaced; the tier's share of the provider cost saved is credited to the
 * tenant's wallet.
 */
import type { ChatChunk, ChatCompletion, ChatRequest, Usage } from '../formats/openai/types.ts';
import type { Deployment } from '../config/snapshot.ts';
import { chatCall } from '../router/calls.ts';
import type { AttemptLog } from '../router/router.ts';
import type { ChatOutcome } from './chat-forward.ts';
import { walletCreditUsd } from './cache/economics.ts';
import { guardResponse } from './guardrails/stage.ts';
import { tenantTier } from './cache/policy.ts';
import { replaySteps } from './cache/replay.ts';
import type { CacheLookup } from './cache/stage.ts';
import { promptTokensOf, type RequestContext } from './context.ts';
import { callContext, routeRequest, type PipelineDeps } from './forward.ts';
import { settle } from './settlement.ts';
import type { StreamEnd, StreamMeta } from './stream-relay.ts';

type Hit = Extract<CacheLookup, { kind: 'hit' }>;

export async function serveHit(
  deps: PipelineDeps,
  ctx: RequestContext,
  req: ChatRequest,
  hit: Hit,
): Promise<ChatOutcome> {
  let answer: ChatCompletion = hit.response;
  let deployment: Deployment | undefined;
  let log: AttemptLog = { attempts: 0, failed: [] };
  if (hit.tweak) {
    const tweak = hit.tweak;
    const routed = await deps.router.execute(routeRequest(ctx, tweak.model, ['chat']), (d) =>
      chatCall(callContext(deps, ctx, d), tweak),
    );
    answer = routed.value;
    deployment = routed.deployment;
    log = routed.log;
  }
  const prompt = promptTokensOf(ctx, req);
  const completionTokens = answer.usage?.completion_tokens ?? hit.entry.completionTokens;
  const usage: Usage = {
    prompt_tokens: prompt,
    completion_tokens: completionTokens,
    total_tokens: prompt + completionTokens,
  };
  const created = Math.floor(Date.now() / 1000);
  const completion: ChatCompletion = {
    ...answer,
    id: `chatcmpl-${ctx.id}`,
    created,
    model: hit.response.model,
    choices: answer.choices.map((c) => ({ ...c, message: { ...c.message } })),
    usage,
  };

  const chargeUsd = hitChargeUsd(hit.chargeUsd, ctx.admission?.reservation?.amountUsd);
  // A stored answer meets this request's response guardrails like a fresh one would.
  const guarded = guardResponse(ctx, completion);
  await creditWallet(deps, ctx, hit);
  await settle(deps, ctx, {
    status: 200,
    deployment,
    attempts: log.attempts,
    usage,
    costUsd: chargeUsd,
    cacheHit: true,
  });

  if (!req.stream)
    return { kind: 'completion', completion: guarded, usage, costUsd: chargeUsd, deployment, log };
  const meta: StreamMeta = { id: guarded.id, created, model: guarded.model };
  const text = guarded.choices[0]?.message.content ?? '';
  return {
    kind: 'stream',
    meta,
    deployment,
    log,
    chunks: (async function* (): AsyncGenerator<ChatChunk[], StreamEnd> {
      // The guarded answer, as a non-streamed hit gets: the whole stored text is at hand, so a
      // response redaction applies here although a live stream (never scanned) skips it.
      yield* replaySteps(guarded, meta);
      return {
        outcome: 'complete',
        usage,
        text,
        finishReason: guarded.choices[0]?.finish_reason ?? 'stop',
        deployment,
        parts: [],
        log,
      };
    })(),
    settle: async () => ({ usage, costUsd: chargeUsd }),
  };
}

/**
 * What a hit is charged: the call it replaced, at most what the request's budget hold took. A
 * request without `max_tokens` is held for 4,096 output tokens (or the deployment's limit), but
 * any stored answer serves it, however long; unlike a fresh call, the hit's cost is known before
 * it is served and no provider bills it, so the quote stands and the budget is never passed.
 * Without a hold (no budget) the replaced call's price stands.
 */
export const hitChargeUsd = (replacedUsd: number, heldUsd: number | undefined): number =>
  heldUsd === undefined ? replacedUsd : Math.min(replacedUsd, heldUsd);

async function creditWallet(deps: PipelineDeps, ctx: RequestContext, hit: Hit): Promise<void> {
  const amountUsd = walletCreditUsd(
    hit.saving.savedUsd,
    tenantTier(ctx.tenant.spec),
    hit.policy.savingsShare,
  );
  if (amountUsd <= 0) return;
  try {
    await deps.stores.wallets.credit(ctx.tenant.name, 'cache_credit', {
      amountUsd,
      keyId: ctx.key.id,
      reference: ctx.id,
      idempotencyKey: `cache:${ctx.id}`,
    });
    if (ctx.usage.cache) ctx.usage.cache.creditedUsd = amountUsd;
  } catch (err) {
    ctx.log.warn({ err: (err as Error).message }, 'cache saving not credited');
  }
}
