/**
 * Anthropic's `POST /v1/messages/count_tokens`: the prompt's input tokens as Gantry counts them
 * for budgets and limits (accounting/tokens.ts), for any provider. It calls no model, so it is
 * neither charged nor rate limited; the model must still be one the key may use.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { estimatePromptTokens } from '../../accounting/tokens.ts';
import { AnthropicMessagesRequest, messagesToChat } from '../../formats/anthropic/index.ts';
import { accessibleRoute } from '../../pipeline/context.ts';
import type { RouteHooks } from './hooks.ts';

const CountTokensRequest = Type.Object({
  ...AnthropicMessagesRequest.properties,
  max_tokens: Type.Optional(AnthropicMessagesRequest.properties.max_tokens),
});
type CountTokensRequest = Omit<AnthropicMessagesRequest, 'max_tokens'> & { max_tokens?: number };

export function countTokensRoute(app: FastifyInstance, hooks: RouteHooks): void {
  app.post(
    '/v1/messages/count_tokens',
    { schema: { body: CountTokensRequest } },
    async (request, reply): Promise<{ input_tokens: number }> => {
      const ctx = hooks.context(request, reply);
      const body = request.body as CountTokensRequest;
      accessibleRoute(ctx, body.model);
      const chat = messagesToChat({ ...body, max_tokens: body.max_tokens ?? 1, stream: false });
      return { input_tokens: estimatePromptTokens(chat) };
    },
  );
}
