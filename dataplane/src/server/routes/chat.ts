import type { FastifyInstance } from 'fastify';
import type { ChatRequest } from '../../formats/openai/types.ts';
import { OpenAIStreamEncoder } from '../../formats/openai/encoder.ts';
import { runChat } from '../../pipeline/chat.ts';
import type { PipelineDeps } from '../../pipeline/forward.ts';
import { ChatRequestSchema } from '../schemas.ts';
import { writeStream } from '../stream-writer.ts';
import { replyServedHeaders, streamHeaders } from './headers.ts';
import type { RouteHooks } from './hooks.ts';

export function chatRoute(app: FastifyInstance, deps: PipelineDeps, hooks: RouteHooks): void {
  app.post('/v1/chat/completions', { schema: { body: ChatRequestSchema } }, async (request, reply) => {
    const ctx = hooks.context(request, reply);
    const body = request.body as ChatRequest;
    const outcome = await runChat(deps, ctx, body, 'chat');
    if (outcome.kind === 'completion') {
      replyServedHeaders(reply, ctx, outcome, outcome.costUsd);
      return outcome.completion;
    }
    reply.hijack();
    const encoder = new OpenAIStreamEncoder(outcome.meta, body.stream_options?.include_usage === true);
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
