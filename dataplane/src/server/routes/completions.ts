import type { FastifyInstance } from 'fastify';
import { ResponseHeaders } from '../../brand.ts';
import { formatUsd } from '../../accounting/cost.ts';
import type { CompletionRequest, Usage } from '../../formats/openai/types.ts';
import { Utf8Reads } from '../../formats/utf8-reads.ts';
import { SseParser, SseTooLong, sseData } from '../../formats/sse.ts';
import { GatewayError } from '../../errors.ts';
import type { CompletionStreamEvent, UpstreamError } from '../../providers/types.ts';
import { drained, openStream } from '../stream-writer.ts';
import type { PipelineDeps } from '../../pipeline/forward.ts';
import { runCompletions, STREAM_STATUS } from '../../pipeline/simple.ts';
import { CompletionRequestSchema } from '../schemas.ts';
import { legacyOversizedCause } from '../../router/oversized-cause.ts';
import { oversizedMessage } from '../../router/errors.ts';
import { replyServedHeaders, streamHeaders } from './headers.ts';
import type { RouteHooks } from './hooks.ts';

/** Legacy completions: non-streaming answers are canonical; streams are piped as they come. */
export function completionsRoute(app: FastifyInstance, deps: PipelineDeps, hooks: RouteHooks): void {
  app.post('/v1/completions', { schema: { body: CompletionRequestSchema } }, async (request, reply) => {
    const ctx = hooks.context(request, reply);
    const body = request.body as CompletionRequest;
    const outcome = await runCompletions(deps, ctx, body);
    if (outcome.kind === 'completion') {
      replyServedHeaders(reply, ctx, outcome, outcome.costUsd);
      return outcome.response;
    }
    reply.hijack();
    const res = reply.raw;
    const trailers = openStream(res, streamHeaders(ctx, outcome));
    const parser = new SseParser();
    const reads = new Utf8Reads();
    const tally = new LegacyStreamTally(outcome.readEvent);
    let broken = false;
    /** The event past the parser's bound that ended the stream, when one did. */
    let oversized: UpstreamError | undefined;
    try {
      for await (const buf of outcome.upstream.body) {
        for (const event of parser.push(reads.decode(buf as Buffer))) tally.push(event.data);
        if (res.destroyed) break;
        if (!res.write(buf)) await drained(res);
      }
    } catch (err) {
      broken = true;
      // Its own kind, as on chat streams: the deployment's fault unless the request asked for echo.
      if (err instanceof SseTooLong)
        oversized = {
          kind: 'oversized',
          status: 0,
          message: err.message,
          requestCause: legacyOversizedCause(body),
        };
    }
    outcome.upstream.body.destroy();
    const ending = legacyStreamEnding(res.destroyed, broken, tally.done);
    // Legacy streams are piped byte for byte, so they settle after the provider's end marker.
    const cost = await outcome.settle(tally.usage, tally.text, ending, oversized ?? tally.failure);
    if (!res.destroyed) {
      if (ending === 'failed') res.write(interruption(oversized));
      // Every stream that reaches its end tells the client what it was charged, $0 for a failed
      // one; HTTP/1.0 has no trailers.
      if (trailers) res.addTrailers({ [ResponseHeaders.cost]: formatUsd(cost) });
      res.end();
    }
    await hooks.streamed(request, {
      status: STREAM_STATUS[ending],
      clientGone: ending === 'client_gone',
      firstChunkAt: undefined,
    });
  });
}

/**
 * The event that ends a failed legacy stream. The cut may have left the upstream's last line
 * or event open (an event past the bound always does): two line breaks end it first, so the
 * error is an event of its own rather than the tail of that line.
 */
export function interruption(oversized: UpstreamError | undefined): string {
  const message = oversized ? `stream interrupted: ${oversizedMessage(oversized)}` : 'stream interrupted';
  return `\n\n${sseData(JSON.stringify(new GatewayError('upstream_error', message).toBody()))}`;
}

/**
 * A client that left decides first (it is billed for what was produced); otherwise a stream
 * is complete only when the provider sent its `[DONE]` marker: a body that broke, or ended
 * without the marker (an in-stream error event, a cut connection), failed.
 */
export function legacyStreamEnding(
  clientGone: boolean,
  broken: boolean,
  sawDone: boolean,
): 'complete' | 'client_gone' | 'failed' {
  if (clientGone) return 'client_gone';
  return broken || !sawDone ? 'failed' : 'complete';
}

/** What a piped legacy stream has told so far: the last usage and error, the text, its end marker. */
export class LegacyStreamTally {
  usage: Usage | undefined;
  failure: UpstreamError | undefined;
  text = '';
  done = false;

  constructor(private readonly read: (data: string) => CompletionStreamEvent) {}

  push(data: string): void {
    if (data === '[DONE]') {
      this.done = true;
      return;
    }
    const event = this.read(data);
    this.usage = event.usage ?? this.usage;
    this.failure = event.error ?? this.failure;
    this.text += event.text;
  }
}
