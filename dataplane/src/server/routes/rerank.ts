import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { PipelineDeps } from '../../pipeline/forward.ts';
import { runRerank } from '../../pipeline/rerank/run.ts';
import type { RerankRequest } from '../../pipeline/rerank/shape.ts';
import { replyServedHeaders } from './headers.ts';
import type { RouteHooks } from './hooks.ts';

const open = { additionalProperties: true } as const;
/** Cohere's own ceiling on documents per call. */
const MAX_DOCUMENTS = 10_000;

export const RerankRequestSchema = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 256 }),
    query: Type.String({ minLength: 1 }),
    documents: Type.Array(Type.Union([Type.String(), Type.Object({ text: Type.String() }, open)]), {
      minItems: 1,
      maxItems: MAX_DOCUMENTS,
    }),
    top_n: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_DOCUMENTS })),
    return_documents: Type.Optional(Type.Boolean()),
  },
  open,
);

export function rerankRoute(app: FastifyInstance, deps: PipelineDeps, hooks: RouteHooks): void {
  app.post('/v1/rerank', { schema: { body: RerankRequestSchema } }, async (request, reply) => {
    const ctx = hooks.context(request, reply);
    // A top_n above the document count returns every document, as Cohere and Jina do.
    const result = await runRerank(deps, ctx, request.body as RerankRequest);
    replyServedHeaders(reply, ctx, result, result.costUsd);
    return result.response;
  });
}
