/**
 * The agent and utility routes (a2a, interactions, ocr, rag), registered together so the
 * app wires them in one line; each keeps its own in-process state here.
 */
import type { FastifyInstance } from 'fastify';
import { A2A_ID_TTL_MS, A2aOwnership } from '../../pipeline/a2a/owners.ts';
import type { PipelineDeps } from '../../pipeline/forward.ts';
import { a2aRoute } from './a2a.ts';
import type { RouteHooks } from './hooks.ts';
import { mediaLimits } from './media-scope.ts';
import { interactionsRoute, type StoredInteraction } from './interactions.ts';
import { ocrRoute } from './ocr.ts';
import { MemoryRagIndexStore } from '../../stores/rag/memory.ts';
import type { RagIndexStore } from '../../stores/rag/types.ts';
import { ragRoutes } from './rag.ts';

export interface AgentRouteOptions {
  maxUploadBytes?: number | undefined;
  /** RAG indexes; in process unless given. */
  rag?: RagIndexStore | undefined;
}

export function agentRoutes(
  app: FastifyInstance,
  deps: PipelineDeps,
  hooks: RouteHooks,
  opts: AgentRouteOptions,
): void {
  const limits = mediaLimits(opts.maxUploadBytes);
  a2aRoute(app, deps, hooks, new A2aOwnership(deps.stores.owned<true>('a2a', { ttlMs: A2A_ID_TTL_MS })));
  ocrRoute(app, deps, hooks, limits);
  interactionsRoute(app, deps, hooks, deps.stores.owned<StoredInteraction>('interactions'));
  ragRoutes(app, deps, hooks, limits, opts.rag ?? new MemoryRagIndexStore());
}
