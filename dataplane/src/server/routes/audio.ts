/** POST /v1/audio/transcriptions (multipart, every response_format) and /v1/audio/speech (binary stream). */
import type { FastifyInstance } from 'fastify';
import { invalidParam } from '../../errors.ts';
import { runSpeech, runTranscription } from '../../pipeline/media/audio.ts';
import type { PipelineDeps } from '../../pipeline/forward.ts';
import { AUDIO_TYPES } from '../../pipeline/media/sniff.ts';
import { readUpload, requiredFile } from '../../pipeline/media/upload.ts';
import { replyServedHeaders } from './headers.ts';
import type { RouteHooks } from './hooks.ts';
import { withMultipart, type MediaLimits } from './media-scope.ts';

export function audioRoute(
  app: FastifyInstance,
  deps: PipelineDeps,
  hooks: RouteHooks,
  limits: MediaLimits,
): void {
  app.post('/v1/audio/speech', async (request, reply) => {
    const ctx = hooks.context(request, reply);
    const body = request.body;
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw invalidParam('body', 'must be a JSON object');
    const speech = await runSpeech(deps, ctx, body as Record<string, unknown>);
    replyServedHeaders(reply, ctx, speech, speech.costUsd).header('content-type', speech.contentType);
    return reply.send(speech.audio);
  });

  withMultipart(app, limits, (scope) => {
    scope.post('/v1/audio/transcriptions', async (request, reply) => {
      const ctx = hooks.context(request, reply);
      const upload = await readUpload(request, {
        maxFileBytes: limits.maxUploadBytes,
        files: { file: AUDIO_TYPES },
      });
      const result = await runTranscription(deps, ctx, upload.fields, requiredFile(upload, 'file'));
      replyServedHeaders(reply, ctx, result, result.costUsd);
      if (typeof result.body !== 'string') return result.body;
      return reply.header('content-type', result.contentType).send(result.body);
    });
  });
}
