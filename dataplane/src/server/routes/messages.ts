import type { FastifyInstance } from 'fastify';
import { GatewayError } from '../../errors.ts';
import {
  AnthropicMessagesRequest,
  anthropicParam,
  chatToMessages,
  messagesToChat,
  withNative,
} from '../../formats/anthropic/index.ts';
import type { ChatRequest } from '../../formats/openai/types.ts';
import { AnthropicClientEncoder } from '../../formats/anthropic-encoder.ts';
import { runChat } from '../../pipeline/chat.ts';
import type { PipelineDeps } from '../../pipeline/forward.ts';
import { writeStream } from '../stream-writer.ts';
import { replyServedHeaders, streamHeaders } from './headers.ts';
import type { RouteHooks } from './hooks.ts';

/**
 * Anthropic Messages in, any provider out: translated to the canonical request, run
 * through the same pipeline as chat completions, and translated back.
 */
export function messagesRoute(app: FastifyInstance, deps: PipelineDeps, hooks: RouteHooks): void {
  app.post('/v1/messages', { schema: { body: AnthropicMessagesRequest } }, async (request, reply) => {
    const ctx = hooks.context(request, reply);
    const body = request.body as AnthropicMessagesRequest;
    const beta = request.headers['anthropic-beta'];
    const chat = withNative(
      withCacheBypass(messagesToChat(body), body),
      body,
      Array.isArray(beta) ? beta.join(',') : beta,
    );
    const outcome = await runChat(deps, ctx, chat, 'messages').catch((err: unknown) => {
      throw inClientTerms(err, chat);
    });
    if (outcome.kind === 'completion') {
      replyServedHeaders(reply, ctx, outcome, outcome.costUsd);
      return chatToMessages(outcome.completion, outcome.completion.model);
    }
    reply.hijack();
    // The final message_delta carries the real count; message_start uses the one admission made, if any.
    const encoder = new AnthropicClientEncoder(outcome.meta, ctx.promptTokens ?? 0);
    const result = await writeStream(
      reply.raw,
      streamHeaders(ctx, outcome),
      encoder,
      outcome.chunks,
      outcome.settle,
      hooks.shutdown,
    );
    await hooks.streamed(request, result);
  });
}

/**
 * Errors on /v1/messages: the SPEC.md body plus Anthropic's top-level `type: "error"`, so
 * both SPEC.md clients and the Anthropic SDK read it.
 */
export function anthropicErrorBody(
  error: GatewayError,
): { type: 'error' } & ReturnType<GatewayError['toBody']> {
  return { type: 'error', ...error.toBody() };
}

/** An error about a translated media part names the Anthropic field the client sent. */
function inClientTerms(err: unknown, chat: ChatRequest): unknown {
  if (!(err instanceof GatewayError) || err.param === undefined) return err;
  const param = anthropicParam(chat, err.param);
  if (param === undefined) return err;
  return new GatewayError(err.type, err.message.replace(err.param, param), {
    param,
    headers: err.headers,
    status: err.status,
    cause: err.cause,
  });
}

/** `metadata.cache_bypass` is Gantry's, not Anthropic's: carry it across the translation. */
function withCacheBypass(chat: ChatRequest, body: AnthropicMessagesRequest): ChatRequest {
  const bypass = (body.metadata as Record<string, unknown> | undefined)?.cache_bypass;
  return bypass === undefined ? chat : { ...chat, metadata: { ...chat.metadata, cache_bypass: bypass } };
}
