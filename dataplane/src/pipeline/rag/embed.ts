/**
 * Embeds texts for RAG through the same money path as /v1/embeddings: the key's access to
 * the embedding model, its rate limit and a budget hold on the counted tokens, the router
 * (batches of EMBED_BATCH inputs, each free to fail over), and one settlement for all
 * batches. A batch that fails after others were served still charges those served.
 */
import { scaledCost } from '../../accounting/cost.ts';
import { chargedMicros, microsToUsd } from '../../accounting/micros.ts';
import { estimateTextTokens } from '../../accounting/tokens.ts';
import type { UsageEndpoint } from '../../accounting/usage.ts';
import type { Deployment } from '../../config/snapshot.ts';
import { GatewayError } from '../../errors.ts';
import { embeddingsCall } from '../../router/calls.ts';
import type { AttemptLog } from '../../router/router.ts';
import { UpstreamFailure } from '../../router/upstream.ts';
import { admit } from '../admission.ts';
import { accessibleRoute, reachableRoutes, type RequestContext } from '../context.ts';
import { callContext, routeRequest, type PipelineDeps } from '../forward.ts';
import { settle } from '../settlement.ts';
import type { RateTicket } from '../../stores/rate-limiter.ts';

/** Inputs per embeddings call: within every major provider's per-call limit (OpenAI 2,048). */
export const EMBED_BATCH = 256;

export interface Embedded {
  vectors: number[][];
  promptTokens: number;
  costUsd: number;
  deployment: Deployment;
  log: AttemptLog;
}

function vectorOf(e: number[] | string, at: number): number[] {
  if (Array.isArray(e) && e.length > 0 && e.every((x) => typeof x === 'number' && Number.isFinite(x)))
    return e;
  throw new UpstreamFailure({
    kind: 'server',
    status: 200,
    message: `upstream embedding ${at} is not a float vector`,
  });
}

export async function embedTexts(
  deps: PipelineDeps,
  ctx: RequestContext,
  model: string,
  texts: readonly string[],
  endpoint: UsageEndpoint,
): Promise<Embedded> {
  Object.assign(ctx.usage, { endpoint, requestedModel: model, stream: false });
  const route = accessibleRoute(ctx, model);
  if (!route.capabilities.has('embeddings'))
    throw new GatewayError('unsupported_endpoint', `model ${model} is not an embedding model`, {
      param: 'embedding_model',
    });
  const counted = texts.reduce((n, t) => n + estimateTextTokens(t), 0);
  ctx.admission = await admit(
    deps,
    ctx,
    () => reachableRoutes(ctx, model),
    () => counted,
    { maxTokens: 0 },
  );
  const vectors: number[][] = [];
  let promptTokens = 0;
  // Summed before rounding, rounded once: one rounding per batch could pass the hold.
  let scaled = 0;
  let cost = 0;
  let attempts = 0;
  let batches = 0;
  const failed = new Set<string>();
  let last: Deployment | undefined;
  try {
    for (let at = 0; at < texts.length; at += EMBED_BATCH) {
      const input = texts.slice(at, at + EMBED_BATCH);
      const sent = input.reduce((n, t) => n + estimateTextTokens(t), 0);
      let held: RateTicket | undefined;
      const routed = await deps.router.execute(
        {
          ...routeRequest(ctx, model, ['embeddings']),
          // This batch's own tokens, not the document's: each batch is one request to the provider.
          tokens: () => ({ prompt: sent, output: 0 }),
          onQuotaTicket: (_d, ticket) => (held = ticket),
        },
        (d) => embeddingsCall(callContext(deps, ctx, d), { model, input }),
      );
      const data = [...routed.value.data].sort((a, b) => a.index - b.index);
      if (data.length !== input.length)
        throw new GatewayError(
          'upstream_error',
          `the embedding model returned ${data.length} vectors for ${input.length} inputs`,
        );
      for (const [i, d] of data.entries()) vectors.push(vectorOf(d.embedding, at + i));
      const tokens = routed.value.usage.prompt_tokens || sent;
      // Corrected here, per batch: settlement sees one outcome for all batches and would set
      // each batch's window entry to the whole document's usage.
      if (held) deps.stores.deploymentQuota.adjust(held, tokens).catch(() => undefined);
      promptTokens += tokens;
      batches++;
      scaled += scaledCost(routed.deployment.pricing, { prompt_tokens: tokens, completion_tokens: 0 });
      cost = microsToUsd(chargedMicros(scaled));
      attempts += routed.log.attempts;
      for (const f of routed.log.failed) failed.add(f);
      last = routed.deployment;
    }
  } catch (err) {
    // Batches already served were real spend: settle them with the failure.
    if (last) {
      const status = err instanceof GatewayError ? err.status : 502;
      await settle(deps, ctx, {
        status,
        errorType: err instanceof GatewayError ? err.type : 'upstream_error',
        deployment: last,
        attempts,
        usage: { prompt_tokens: promptTokens, completion_tokens: 0 },
        costUsd: cost,
      });
    }
    throw batches > 0 && err instanceof GatewayError
      ? afterServed(err, batches, texts.length, promptTokens)
      : err;
  }
  await settle(deps, ctx, {
    status: 200,
    deployment: last!,
    attempts,
    usage: { prompt_tokens: promptTokens, completion_tokens: 0 },
    costUsd: cost,
  });
  return { vectors, promptTokens, costUsd: cost, deployment: last!, log: { attempts, failed: [...failed] } };
}

/**
 * A batch's refusal after earlier batches were embedded: its own words ("not sent upstream, not
 * charged") hold for that batch only, so the caller is told what was embedded and charged.
 */
function afterServed(err: GatewayError, batches: number, inputs: number, tokens: number): GatewayError {
  const served = Math.min(batches * EMBED_BATCH, inputs);
  return new GatewayError(
    err.type,
    `${err.message}, for batch ${batches + 1} of ${Math.ceil(inputs / EMBED_BATCH)}; the first ${served} ` +
      `of ${inputs} inputs, embedded before it, were sent and charged (${tokens} tokens)`,
    { headers: err.headers, param: err.param, cause: err },
  );
}
