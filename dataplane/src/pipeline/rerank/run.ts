/**
 * `POST /v1/rerank`: proxied through the router to deployments with the `rerank`
 * capability, charged per search (`pricing.perSearch`: as many as the provider reports, else
 * one per started hundred documents) plus the tokens read when the deployment prices tokens;
 * the budget holds the dearest such charge for a search per hundred documents before the call.
 */
import { randomUUID } from 'node:crypto';
import { costUsd } from '../../accounting/cost.ts';
import { estimateTextTokens } from '../../accounting/tokens.ts';
import { dearestUnitCostUsd, unitCostUsd } from '../../accounting/unit-cost.ts';
import type { Deployment } from '../../config/snapshot.ts';
import { GatewayError } from '../../errors.ts';
import type { AttemptLog } from '../../router/router.ts';
import { admit } from '../admission.ts';
import { accessibleRoute, reachableRoutes, type RequestContext } from '../context.ts';
import { callContext, routeRequest, type PipelineDeps } from '../forward.ts';
import { passthroughCall } from '../passthrough/call.ts';
import { settleAnswered } from '../settlement.ts';
import { watchSent, type AbandonedCharge } from '../unanswered-call.ts';
import {
  documentText,
  readUpstreamRerank,
  shapeResults,
  type RerankRequest,
  type RerankResponse,
} from './shape.ts';

export interface RerankOutcome {
  response: RerankResponse;
  costUsd: number;
  deployment: Deployment;
  log: AttemptLog;
}

/**
 * Documents one search unit covers: Cohere bills a query over up to 100 documents as one
 * search (longer documents are split and count as more), and so report the providers that
 * follow it. The hold counts a search per started hundred, so a long list cannot be admitted
 * on the price of one search and then charged a hundred.
 */
export const DOCUMENTS_PER_SEARCH = 100;

export const heldSearches = (documents: number): number =>
  Math.max(1, Math.ceil(documents / DOCUMENTS_PER_SEARCH));

/**
 * Searches charged: the provider's report, else the hold's count, whether the call was
 * answered or left once sent, so leaving never costs more (or less) than an answer would.
 */
export const chargedSearches = (reported: number | undefined, documents: number): number =>
  reported ?? heldSearches(documents);

/** A reranker reads the query once per document, and every document. */
export function rerankTokens(req: RerankRequest): number {
  const query = estimateTextTokens(req.query);
  return req.documents.reduce((n, d) => n + query + estimateTextTokens(documentText(d)), 0);
}

/**
 * A rerank left once sent: the provider read the query and every document, so the tokens the
 * gateway counts and the searches an answer without a report is charged.
 */
export function abandonedRerank(req: RerankRequest, tokens: () => number): AbandonedCharge {
  return ({ pricing }) => {
    const usage = { prompt_tokens: tokens(), completion_tokens: 0 };
    const searches = chargedSearches(undefined, req.documents.length);
    return { usage, costUsd: costUsd(pricing, usage) + unitCostUsd(pricing, { searches }) };
  };
}

export async function runRerank(
  deps: PipelineDeps,
  ctx: RequestContext,
  req: RerankRequest,
): Promise<RerankOutcome> {
  Object.assign(ctx.usage, { endpoint: 'rerank', requestedModel: req.model, stream: false });
  const route = accessibleRoute(ctx, req.model);
  if (!route.capabilities.has('rerank'))
    throw new GatewayError(
      'unsupported_endpoint',
      `model ${req.model} does not support the /v1/rerank endpoint`,
      {
        param: 'model',
      },
    );
  const routes = () => reachableRoutes(ctx, req.model);
  let tokens: number | undefined;
  const counted = () => (tokens ??= rerankTokens(req));
  ctx.admission = await admit(deps, ctx, routes, counted, {
    maxTokens: 0,
    unitCostUsd: dearestUnitCostUsd(routes(), { searches: heldSearches(req.documents.length) }),
  });
  const routed = await deps.router.execute(
    routeRequest(ctx, req.model, ['rerank']),
    watchSent(ctx, abandonedRerank(req, counted), (d, onSent) =>
      passthroughCall(callContext(deps, ctx, d, onSent), 'POST', 'rerank', req).then((body) =>
        readUpstreamRerank(body, req.documents.length),
      ),
    ),
  );
  const up = routed.value;
  const searches = chargedSearches(up.searchUnits, req.documents.length);
  const promptTokens = up.tokens ?? counted();
  const pricing = routed.deployment.pricing;
  const cost =
    costUsd(pricing, { prompt_tokens: promptTokens, completion_tokens: 0 }) +
    unitCostUsd(pricing, { searches });
  await settleAnswered(deps, ctx, routed, cost, { prompt_tokens: promptTokens, completion_tokens: 0 });
  const response: RerankResponse = {
    id: up.id ?? `rerank-${randomUUID()}`,
    model: req.model,
    results: shapeResults(up.results, req),
    meta: { billed_units: { search_units: searches } },
    usage: { total_tokens: promptTokens },
  };
  return { response, costUsd: cost, deployment: routed.deployment, log: routed.log };
}
