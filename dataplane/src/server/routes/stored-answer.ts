/**
 * The reply of an API that keeps what it answered so a later call can chain on it (the
 * Responses API, Gemini Interactions): whole, or streamed with the final object kept before
 * the stream's closing event is written, so a client may chain on it at once. Keeping runs
 * after the answer is served and charged; `keep` must not throw (a store that cannot keep
 * the answer does not fail it).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ClientStreamEncoder } from '../../formats/encoder.ts';
import type { Usage } from '../../formats/openai/types.ts';
import type { ChatOutcome } from '../../pipeline/chat-forward.ts';
import type { RequestContext } from '../../pipeline/context.ts';
import { writeStream } from '../stream-writer.ts';
import { replyServedHeaders, streamHeaders } from './headers.ts';
import type { RouteHooks } from './hooks.ts';

type Completed = Extract<ChatOutcome, { kind: 'completion' }>;

export interface StoredAnswer<T> {
  /** The whole answer in the API's own shape. */
  whole(outcome: Completed): T;
  /** A stream encoder that can also give the finished object. */
  encoder(): ClientStreamEncoder & { seal(usage: Usage): T };
  keep(answer: T): Promise<void>;
}

/** The whole answer to return, or undefined once the reply was streamed (hijacked). */
export async function replyStored<T>(
  request: FastifyRequest,
  reply: FastifyReply,
  ctx: RequestContext,
  hooks: RouteHooks,
  outcome: ChatOutcome,
  answer: StoredAnswer<T>,
): Promise<T | undefined> {
  if (outcome.kind === 'completion') {
    const whole = answer.whole(outcome);
    await answer.keep(whole);
    replyServedHeaders(reply, ctx, outcome, outcome.costUsd);
    return whole;
  }
  reply.hijack();
  const encoder = answer.encoder();
  const result = await writeStream(
    reply.raw,
    streamHeaders(ctx, outcome),
    encoder,
    outcome.chunks,
    async (end, gone) => {
      const settled = await outcome.settle(end, gone);
      if (end.outcome === 'complete' && !gone) await answer.keep(encoder.seal(settled.usage));
      return settled;
    },
    hooks.shutdown,
  );
  await hooks.streamed(request, result);
  return undefined;
}
