import type { FastifyInstance } from 'fastify';
import type { EmbeddingRequest } from '../../formats/openai/types.ts';
import type { PipelineDeps } from '../../pipeline/forward.ts';
import { runEmbeddings } from '../../pipeline/simple.ts';
import { EmbeddingRequestSchema } from '../schemas.ts';
import { replyServedHeaders } from './headers.ts';
import type { RouteHooks } from './hooks.ts';

export function embeddingsRoute(app: FastifyInstance, deps: PipelineDeps, hooks: RouteHooks): void {
  app.post('/v1/embeddings', { schema: { body: EmbeddingRequestSchema } }, async (request, reply) => {
    const ctx = hooks.context(request, reply);
    const result = await runEmbeddings(deps, ctx, request.body as EmbeddingRequest);
    replyServedHeaders(reply, ctx, result, result.costUsd);
    return result.response;
  });
}
