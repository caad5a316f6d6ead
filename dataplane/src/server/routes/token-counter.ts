/**
 * `POST /v1/utils/token_counter`: the tokens of a chat `messages` list or a `prompt` string,
 * counted the way admission counts them (accounting/tokens.ts: o200k, plus per-message
 * overhead). No model is called and nothing is charged; the model must be one the key may use.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { estimatePromptTokens } from '../../accounting/tokens.ts';
import { invalidParam } from '../../errors.ts';
import type { ChatMessage } from '../../formats/openai/types.ts';
import { accessibleRoute } from '../../pipeline/context.ts';
import { ChatRequestSchema } from '../schemas.ts';
import type { RouteHooks } from './hooks.ts';

const TokenCounterRequest = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 256 }),
    messages: Type.Optional(ChatRequestSchema.properties.messages),
    prompt: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);

export interface TokenCount {
  total_tokens: number;
  request_model: string;
  model_used: string;
  tokenizer_type: 'o200k_base';
}

export function tokenCounterRoute(app: FastifyInstance, hooks: RouteHooks): void {
  app.post('/v1/utils/token_counter', { schema: { body: TokenCounterRequest } }, async (request, reply) => {
    const ctx = hooks.context(request, reply);
    const body = request.body as { model: string; messages?: ChatMessage[]; prompt?: string };
    const route = accessibleRoute(ctx, body.model);
    if ((body.messages === undefined) === (body.prompt === undefined))
      throw invalidParam('messages', 'send exactly one of messages and prompt');
    const messages = body.messages ?? [{ role: 'user', content: body.prompt ?? '' }];
    const count: TokenCount = {
      total_tokens: estimatePromptTokens({ model: body.model, messages }),
      request_model: body.model,
      model_used: route.model,
      tokenizer_type: 'o200k_base',
    };
    return count;
  });
}
