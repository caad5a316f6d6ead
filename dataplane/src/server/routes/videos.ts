/**
 * Video jobs: POST /v1/videos (and the compatibility route /v1/videos/generations, JSON or
 * multipart with an input_reference image), GET /v1/videos/{video_id}, GET …/content and
 * POST …/remix. Jobs belong to the tenant and key that created them.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { invalidParam } from '../../errors.ts';
import type { PipelineDeps } from '../../pipeline/forward.ts';
import { IMAGE_TYPES } from '../../pipeline/media/sniff.ts';
import { readUpload } from '../../pipeline/media/upload.ts';
import type { VideoJobStore } from '../../stores/video-jobs/types.ts';
import {
  beginVideoRead,
  createVideo,
  findJob,
  readVideo,
  settleVideoRead,
  videoRecord,
} from '../../pipeline/media/videos.ts';
import { replyServedHeaders } from './headers.ts';
import type { RouteHooks } from './hooks.ts';
import { withMultipart, type MediaLimits } from './media-scope.ts';

const jsonObject = (v: unknown): Record<string, unknown> => {
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw invalidParam('body', 'must be a JSON object');
  return v as Record<string, unknown>;
};

interface VideoParams {
  Params: { video_id: string };
}

export function videosRoute(
  app: FastifyInstance,
  deps: PipelineDeps,
  hooks: RouteHooks,
  limits: MediaLimits,
  store: VideoJobStore,
): void {
  const create = async (request: FastifyRequest, reply: FastifyReply) => {
    const ctx = hooks.context(request, reply);
    if (request.isMultipart()) {
      const upload = await readUpload(request, {
        maxFileBytes: limits.maxUploadBytes,
        files: { input_reference: IMAGE_TYPES },
      });
      const result = await createVideo(deps, ctx, store, upload.fields, { kind: 'multipart', ...upload });
      replyServedHeaders(reply, ctx, result, result.costUsd);
      return result.record;
    }
    const body = jsonObject(request.body);
    const result = await createVideo(deps, ctx, store, body, { kind: 'json', json: body });
    replyServedHeaders(reply, ctx, result, result.costUsd);
    return result.record;
  };

  withMultipart(app, limits, (scope) => {
    scope.post('/v1/videos', create);
    scope.post('/v1/videos/generations', create);
  });

  app.get<VideoParams>('/v1/videos/:video_id', async (request, reply) => {
    const ctx = hooks.context(request, reply);
    const read = await videoRecord(
      deps,
      ctx,
      await beginVideoRead(deps, ctx, store, request.params.video_id),
    );
    replyServedHeaders(reply, ctx, read.served, 0);
    return read.record;
  });

  app.get<VideoParams>('/v1/videos/:video_id/content', async (request, reply) => {
    const ctx = hooks.context(request, reply);
    const job = await beginVideoRead(deps, ctx, store, request.params.video_id);
    const res = await readVideo(deps, ctx, job, 'videos/content');
    // Settled once the provider has answered, as a file's content is: the bytes then stream through.
    replyServedHeaders(reply, ctx, await settleVideoRead(deps, ctx, job), 0);
    const type = res.headers['content-type'];
    reply.header('content-type', (Array.isArray(type) ? type[0] : type) ?? 'application/octet-stream');
    return reply.send(res.body);
  });

  app.post<VideoParams>('/v1/videos/:video_id/remix', async (request, reply) => {
    const ctx = hooks.context(request, reply);
    const source = await findJob(ctx, store, request.params.video_id);
    const body = jsonObject(request.body);
    const result = await createVideo(deps, ctx, store, body, { kind: 'json', json: body }, source);
    replyServedHeaders(reply, ctx, result, result.costUsd);
    return result.record;
  });
}
