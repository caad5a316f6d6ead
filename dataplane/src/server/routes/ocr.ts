/** `POST /v1/ocr`: Mistral's OCR API, proxied to deployments with the `ocr` capability. */
import type { FastifyInstance } from 'fastify';
import { invalidParam } from '../../errors.ts';
import type { PipelineDeps } from '../../pipeline/forward.ts';
import { runOcr } from '../../pipeline/ocr/run.ts';
import { replyServedHeaders } from './headers.ts';
import type { RouteHooks } from './hooks.ts';
import type { MediaLimits } from './media-scope.ts';

export function ocrRoute(
  app: FastifyInstance,
  deps: PipelineDeps,
  hooks: RouteHooks,
  limits: MediaLimits,
): void {
  app.post('/v1/ocr', async (request, reply) => {
    const ctx = hooks.context(request, reply);
    const body = request.body;
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw invalidParam('body', 'must be a JSON object');
    const result = await runOcr(deps, ctx, body as Record<string, unknown>, limits.maxUploadBytes);
    replyServedHeaders(reply, ctx, result, result.costUsd);
    return result.response;
  });
}
