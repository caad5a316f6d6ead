import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { invalidParam } from '../../errors.ts';
import type { PipelineDeps } from '../../pipeline/forward.ts';
import { runTokenCount, type TokenCountRequest } from '../../pipeline/token-counter/run.ts';
import { ChatRequestSchema } from '../schemas.ts';
import type { RouteHooks } from './hooks.ts';

/** LiteLLM's request: a model and either chat `messages` or a text `prompt`. */
export const TokenCountRequestSchema = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 256 }),
    prompt: Type.Optional(Type.String()),
    messages: Type.Optional(ChatRequestSchema.properties.messages),
    tools: Type.Optional(ChatRequestSchema.properties.tools),
  },
  { additionalProperties: true },
);

export function tokenCounterRoute(app: FastifyInstance, deps: PipelineDeps, hooks: RouteHooks): void {
  app.post(
    '/v1/utils/token_counter',
    { schema: { body: TokenCountRequestSchema } },
    async (request, reply) => {
      const ctx = hooks.context(request, reply);
      const body = request.body as TokenCountRequest & { contents?: unknown };
      if (body.messages === undefined && body.prompt === undefined)
        throw invalidParam(
          'messages',
          body.contents === undefined
            ? 'one of messages or prompt is required'
            : 'Gemini contents are not counted here; send OpenAI messages or a prompt',
        );
      const counted = await runTokenCount(deps, ctx, body);
      reply.headers(ctx.responseHeaders);
      return counted;
    },
  );
}
