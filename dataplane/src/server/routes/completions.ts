import type { FastifyInstance } from 'fastify';
import { ResponseHeaders } from '../../brand.ts';
import { formatUsd } from '../../accounting/cost.ts';
import type { CompletionRequest, Usage } from '../../formats/openai/types.ts';
import { SseParser, sseData } from '../../formats/sse.ts';
import { GatewayError } from '../../errors.ts';
import { drained, SSE_HEADERS } from '../stream-writer.ts';
import type { PipelineDeps } from '../../pipeline/forward.ts';
import { runCompletions } from '../../pipeline/simple.ts';
import { CompletionRequestSchema } from '../schemas.ts';
import { servedHeaders } from './headers.ts';
import type { RouteHooks } from './hooks.ts';

/** Legacy completions: non-streaming answers are canonical; streams are piped as they come. */
export function completionsRoute(app: FastifyInstance, deps: PipelineDeps, hooks: RouteHooks): void {
  app.post('/v1/completions', { schema: { body: CompletionRequestSchema } }, async (request, reply) => {
    const ctx = hooks.context(request, reply);
    const outcome = await runCompletions(deps, ctx, request.body as CompletionRequest);
    if (outcome.kind === 'completion') {
      reply.headers(servedHeaders(ctx, outcome, outcome.costUsd));
      return outcome.response;
    }
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, { ...SSE_HEADERS, ...servedHeaders(ctx, outcome) });
    const parser = new SseParser();
    const decoder = new TextDecoder();
    let usage: Usage | undefined;
    let text = '';
    let failed = false;
    try {
      for await (const buf of outcome.upstream.body) {
        for (const event of parser.push(decoder.decode(buf as Buffer, { stream: true }))) {
          usage = outcome.usageOf(event) ?? usage;
          text += completionText(event.data);
        }
        if (res.destroyed) break;
        if (!res.write(buf)) await drained(res);
      }
    } catch {
      failed = !res.destroyed;
    }
    outcome.upstream.body.destroy();
    const clientGone = res.destroyed;
    // Legacy streams are piped byte for byte, so they settle after the provider's end marker.
    const cost = await outcome.settle(
      usage,
      text,
      clientGone ? 'client_gone' : failed ? 'failed' : 'complete',
    );
    if (!res.destroyed) {
      if (failed)
        res.write(sseData(JSON.stringify(new GatewayError('upstream_error', 'stream interrupted').toBody())));
      else res.addTrailers({ [ResponseHeaders.cost]: formatUsd(cost) });
      res.end();
    }
    await hooks.streamed(request, { status: clientGone ? 499 : failed ? 502 : 200, clientGone });
  });
}

function completionText(data: string): string {
  if (data === '[DONE]') return '';
  try {
    const chunk = JSON.parse(data) as { choices?: { text?: unknown }[] };
    const t = chunk.choices?.[0]?.text;
    return typeof t === 'string' ? t : '';
  } catch {
    return '';
  }
}
