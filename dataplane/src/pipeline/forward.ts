/**
 * The last stage: hand the canonical request to the router, one attempt per deployment,
 * each through that deployment's adapter.
 */
import type { ProviderKind } from '@gantry/crds';
import type { Deployment } from '../config/snapshot.ts';
import type { ChatRequest } from '../formats/openai/types.ts';
import type { ProviderAdapter } from '../providers/types.ts';
import type { CallContext } from '../router/calls.ts';
import { openChatStream, type LiveStream } from '../router/live-stream.ts';
import type { NamedObject } from '../router/lost-object.ts';
import type { RouteRequest, Routed, Router } from '../router/router.ts';
import type { UpstreamClient } from '../router/upstream.ts';
import type { RequestContext } from './context.ts';
import { mayUse } from './context.ts';
import type { AccountingDeps } from './settlement.ts';
import type { CacheDeps } from './cache/stage.ts';
import { prefilled } from './stream-charge.ts';
import type { CcrStore } from './compression/ccr/types.ts';
import type { Continue, StreamMeta } from './stream-relay.ts';
import { chatPromptCharge, watchSent, type SentCall } from './unanswered-call.ts';

export interface ForwardDeps {
  router: Router;
  upstream: UpstreamClient;
  adapters: Readonly<Record<ProviderKind, ProviderAdapter>>;
}

export interface PipelineDeps extends ForwardDeps, AccountingDeps {
  cache: CacheDeps;
  /** Context recovery: what compression removed, per (team, key, session) scope. */
  ccr: CcrStore;
  /** The time upstream 404s are marked at (resources/gone.ts); Date.now by default. */
  now?: (() => number) | undefined;
}

export function routeRequest(ctx: RequestContext, model: string, needs: RouteRequest['needs']): RouteRequest {
  return {
    model,
    snapshot: ctx.snapshot,
    allowed: (m) => mayUse(ctx, m),
    needs,
    signal: ctx.signal,
    deadline: ctx.deadline,
    tokens: ctx.tokenEstimate,
    onQuotaTicket: (d, ticket) => (ctx.quotaTickets ??= []).push({ deployment: d.name, ticket }),
  };
}

/** A pinned request's named objects, for the router to tell a lost one from a failed deployment; logged. */
export function missingObjects(
  ctx: RequestContext,
  objects: readonly NamedObject[],
): RouteRequest['missingObject'] {
  return { objects, log: (fields, message) => ctx.log.warn(fields, message) };
}

export function callContext(
  deps: ForwardDeps,
  ctx: RequestContext,
  d: Deployment,
  onSent?: () => void,
): CallContext {
  return {
    upstream: deps.upstream,
    adapter: deps.adapters[d.provider],
    deployment: d,
    signal: ctx.signal,
    deadline: ctx.deadline,
    headers: ctx.upstreamHeaders,
    onSent,
  };
}

export function openStream(
  deps: ForwardDeps,
  ctx: RequestContext,
  route: RouteRequest,
  req: ChatRequest,
  meta: StreamMeta,
  /** Note the attempt on the wire in `ctx.unanswered` (a first stream, not a continuation). */
  watched = false,
): Promise<Routed<LiveStream>> {
  const call: SentCall<LiveStream> = (d, onSent) =>
    openChatStream(callContext(deps, ctx, d, onSent), req, meta);
  // The stream's verdict on its deployment comes at its end (stream-relay.ts reports it).
  return deps.router.execute(
    { ...route, verdictAtEnd: true },
    watched ? watchSent(ctx, chatPromptCharge(ctx, req), call) : (d) => call(d, undefined),
  );
}

/** Continue a broken stream where a deployment accepts the partial answer as prefill. */
export function continuation(
  deps: ForwardDeps,
  ctx: RequestContext,
  route: RouteRequest,
  req: ChatRequest,
  meta: StreamMeta,
): Continue {
  return async (partial, failed) => {
    try {
      return await openStream(
        deps,
        ctx,
        // The route's own filter still holds (a conversation pinned to its files' deployment).
        {
          ...route,
          filter: (d) => (route.filter?.(d) ?? true) && d.name !== failed.name && d.target.prefill,
        },
        prefilled(req, partial),
        meta,
      );
    } catch {
      return undefined;
    }
  };
}
