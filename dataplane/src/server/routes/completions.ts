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
import { WholeEvents } from './whole-events.ts';
import { replyServedHeaders, streamHeaders } from './headers.ts';
import type { RouteHooks } from './hooks.ts';

const EMPTY = Buffer.alloc(0);

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
    // Only whole events are written: a stream that breaks mid-event is not left half an event
    // before the error event (the SDKs parse the open part and throw a SyntaxError instead).
    const whole = new WholeEvents();
    try {
      for await (const buf of outcome.upstream.body) {
        const text = reads.decode(buf as Buffer);
        for (const event of parser.push(text)) tally.push(event.data);
        const ready = whole.take(buf as Buffer, text, parser.boundary);
        if (res.destroyed) break;
        if (ready.length > 0 && !res.write(ready)) await drained(res);
      }
      if (!res.destroyed) for (const event of parser.end()) tally.push(event.data);
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
    const ending = legacyStreamEnding(res.destroyed, tally.done);
    // Legacy streams are piped byte for byte, so they settle after the provider's end marker;
    // a break after it spoils nothing the caller was sent.
    const failure = tally.done ? tally.failure : (oversized ?? tally.failure);
    const cost = await outcome.settle(tally.usage, tally.text, ending, failure);
    // A last event without its blank line is still the provider's; an open one of a failed
    // stream is never written.
    const rest = ending === 'complete' && !broken ? whole.rest() : EMPTY;
    whole.drop();
    if (!res.destroyed) {
      if (rest.length > 0) res.write(rest);
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
 * The event that ends a failed legacy stream. Only whole events were written before it
 * (WholeEvents), so it is an event of its own as it stands.
 */
export function interruption(oversized: UpstreamError | undefined): string {
  const message = oversized ? `stream interrupted: ${oversizedMessage(oversized)}` : 'stream interrupted';
  return sseData(JSON.stringify(new GatewayError('upstream_error', message).toBody()));
}

/**
 * A client that left decides first (it is billed for what was produced); otherwise a stream
 * is complete when the provider sent its `[DONE]` marker, even if the body broke after it (the
 * answer was whole); a body that ended without the marker (an in-stream error event, a cut
 * connection) failed.
 */
export function legacyStreamEnding(
  clientGone: boolean,
  sawDone: boolean,
): 'complete' | 'client_gone' | 'failed' {
  if (clientGone) return 'client_gone';
  return sawDone ? 'complete' : 'failed';
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
