import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { ResponseHeaders } from '../../brand.ts';
import type { PipelineDeps } from '../../pipeline/forward.ts';
import {
  BUILTIN_MODERATION_MODEL,
  runModeration,
  type ModerationRequest,
} from '../../pipeline/moderations/run.ts';
import { replyServedHeaders } from './headers.ts';
import type { RouteHooks } from './hooks.ts';

const open = { additionalProperties: true } as const;
/** OpenAI's limits: up to 32 texts (or one multimodal list) per call. */
const MAX_INPUTS = 32;

const ModerationPart = Type.Union([
  Type.Object({ type: Type.Literal('text'), text: Type.String() }, open),
  Type.Object(
    { type: Type.Literal('image_url'), image_url: Type.Object({ url: Type.String({ minLength: 1 }) }, open) },
    open,
  ),
]);

export const ModerationRequestSchema = Type.Object(
  {
    model: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    input: Type.Union([
      Type.String(),
      Type.Array(Type.String(), { minItems: 1, maxItems: MAX_INPUTS }),
      Type.Array(ModerationPart, { minItems: 1, maxItems: MAX_INPUTS }),
    ]),
  },
  open,
);

export function moderationsRoute(app: FastifyInstance, deps: PipelineDeps, hooks: RouteHooks): void {
  app.post('/v1/moderations', { schema: { body: ModerationRequestSchema } }, async (request, reply) => {
    const ctx = hooks.context(request, reply);
    const result = await runModeration(deps, ctx, request.body as ModerationRequest);
    replyServedHeaders(reply, ctx, result, result.costUsd);
    // Nothing upstream answered: say so rather than the cache's name.
    if (!result.deployment) reply.header(ResponseHeaders.provider, BUILTIN_MODERATION_MODEL);
    return result.response;
  });
}
