/** POST /v1/images/generations (JSON), /v1/images/edits and /v1/images/variations (multipart). */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { invalidParam } from '../../errors.ts';
import type { PipelineDeps } from '../../pipeline/forward.ts';
import { imageParams, runImages } from '../../pipeline/media/images.ts';
import { IMAGE_TYPES } from '../../pipeline/media/sniff.ts';
import { readUpload, requiredFile } from '../../pipeline/media/upload.ts';
import type { MediaBody, MediaOperation } from '../../providers/types.ts';
import { replyServedHeaders } from './headers.ts';
import type { RouteHooks } from './hooks.ts';
import { withMultipart, type MediaLimits } from './media-scope.ts';

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

export function imagesRoute(
  app: FastifyInstance,
  deps: PipelineDeps,
  hooks: RouteHooks,
  limits: MediaLimits,
): void {
  const answer = async (
    request: FastifyRequest,
    reply: FastifyReply,
    op: MediaOperation,
    fields: Record<string, unknown>,
    body: MediaBody,
  ) => {
    const ctx = hooks.context(request, reply);
    const result = await runImages(deps, ctx, op, imageParams(fields, op), body);
    replyServedHeaders(reply, ctx, result, result.costUsd);
    return result.response;
  };

  app.post('/v1/images/generations', async (request, reply) => {
    if (!isObject(request.body)) throw invalidParam('body', 'must be a JSON object');
    return answer(request, reply, 'images/generations', request.body, { kind: 'json', json: request.body });
  });

  withMultipart(app, limits, (scope) => {
    scope.post('/v1/images/edits', async (request, reply) => {
      const upload = await readUpload(request, {
        maxFileBytes: limits.maxUploadBytes,
        files: { image: IMAGE_TYPES, mask: ['image/png'] },
        // gpt-image edits take several images (`image[]`).
        repeatable: ['image'],
      });
      requiredFile(upload, 'image');
      return answer(request, reply, 'images/edits', upload.fields, { kind: 'multipart', ...upload });
    });
    scope.post('/v1/images/variations', async (request, reply) => {
      const upload = await readUpload(request, {
        maxFileBytes: limits.maxUploadBytes,
        files: { image: ['image/png'] },
      });
      requiredFile(upload, 'image');
      return answer(request, reply, 'images/variations', upload.fields, { kind: 'multipart', ...upload });
    });
  });
}
