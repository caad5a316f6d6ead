/**
 * A chat completion (or Messages call, translated), in SPEC.md's lifecycle order:
 * access and money first, then guardrails → difficulty routing's decision → semantic cache
 * (keyed by the routed model) → compression → router.
 */
import type { Capability } from '@gantry/crds';
import type { ChatRequest } from '../formats/openai/types.ts';
import { admit } from './admission.ts';
import { forwardChat, type ChatOutcome } from './chat-forward.ts';
import { accessibleRoute, promptTokensOf, reachableRoutes, type RequestContext } from './context.ts';
import type { PipelineDeps } from './forward.ts';
import { guardRequest } from './guardrails/stage.ts';
import { lookupCache } from './cache/stage.ts';
import { serveHit } from './cache-hit.ts';
import { compressConversation } from './compression/index.ts';
import { routeByDifficulty, routingCandidates, routingEfforts } from './routing/stage.ts';
import { chatOutputField, checkCapabilities, checkOutputBound, inspectChat } from './validate.ts';
import { holderOfReferencedFiles } from './resources/chat-files.ts';

export type { ChatOutcome, Served } from './chat-forward.ts';

export async function runChat(
  deps: PipelineDeps,
  ctx: RequestContext,
  req: ChatRequest,
  endpoint: 'chat' | 'messages' | 'responses' | 'generate_content' | 'interactions' | 'rag.query',
): Promise<ChatOutcome> {
  Object.assign(ctx.usage, { endpoint, requestedModel: req.model, stream: req.stream === true });
  const needs = admissible(ctx, req);
  ctx.admission = await admit(
    deps,
    ctx,
    () => reachableRoutes(ctx, req.model, routingCandidates(ctx)),
    () => promptTokensOf(ctx, req),
    {
      maxTokens: chatOutputField(req).value,
      sequences: req.n,
      efforts: [req.reasoning_effort, ...routingEfforts(ctx, req)],
    },
  );

  // Files the conversation names must be the caller's, checked before any stage can reach an
  // upstream or the cache; the request then runs where they are held.
  const holder = await holderOfReferencedFiles(deps, ctx, req, needs);
  req = guardRequest(ctx, req);
  // Difficulty routing decides before the cache looks: the lookup is keyed by the model (and
  // reasoning effort) that would serve, so a hit is an answer this key may get, charged at
  // that model's price — never the requested model's entry filled by another model.
  // A conversation pinned to its files' deployment stays on the model the caller named.
  if (!holder) req = applyRouting(ctx, req, needs);
  // SPEC.md caches only chat completions and messages.
  const cached =
    endpoint === 'chat' || endpoint === 'messages'
      ? await lookupCache(deps.cache, ctx, req, endpoint === 'messages' ? 'anthropic' : 'openai')
      : NOT_CACHED;
  if (cached.kind === 'hit') return serveHit(deps, ctx, req, cached);
  req = withoutGatewayFields(req);
  // A Responses or Interactions conversation is a chat one after translation: turn-based
  // steps. A RAG query's prompt is retrieved context the caller asked for, never compressed.
  if (endpoint !== 'generate_content' && endpoint !== 'rag.query')
    req = await compressConversation(deps, ctx, req, endpoint === 'messages' ? 'messages' : 'chat');
  return forwardChat(deps, ctx, req, needs, cached.store, holder);
}

const NOT_CACHED = { kind: 'miss', store: undefined } as const;

/** The model exists, the key may use it, and it can do what the request needs. */
function admissible(ctx: RequestContext, req: ChatRequest): Capability[] {
  const route = accessibleRoute(ctx, req.model);
  const needs = inspectChat(req);
  checkCapabilities(route, 'chat', needs);
  const output = chatOutputField(req);
  checkOutputBound(route, output.param, output.value);
  return needs.capabilities;
}

function applyRouting(ctx: RequestContext, req: ChatRequest, needs: readonly Capability[]): ChatRequest {
  const routed = routeByDifficulty(ctx, req, needs);
  Object.assign(ctx.responseHeaders, routed.headers);
  const d = routed.decision;
  if (d) ctx.usage.routing = { level: d.level, model: d.model, effort: d.effortInjected };
  return routed.req;
}

/** `metadata.cache_bypass` is Gantry's; providers would reject a non-string metadata value. */
function withoutGatewayFields(req: ChatRequest): ChatRequest {
  if (req.metadata?.cache_bypass === undefined) return req;
  const { cache_bypass: _omit, ...metadata } = req.metadata;
  const { metadata: _old, ...rest } = req;
  return Object.keys(metadata).length > 0 ? { ...rest, metadata } : rest;
}
