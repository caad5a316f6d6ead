/**
 * Video jobs: created (and remixed) through the router, priced per second of video when the
 * job is accepted; read back and downloaded from the deployment that holds the job, by the
 * tenant and key that created it only.
 */
import { randomBytes } from 'node:crypto';
import { GatewayError, invalidParam } from '../../errors.ts';
import type { MediaBody } from '../../providers/types.ts';
import type { Deployment } from '../../config/snapshot.ts';
import { UpstreamFailure, type UpstreamResponse } from '../../router/upstream.ts';
import type { Served } from '../chat.ts';
import { admitRead } from '../read-admission.ts';
import { mayUse, type RequestContext } from '../context.ts';
import { callContext, missingObjects, type PipelineDeps } from '../forward.ts';
import { settle } from '../settlement.ts';
import { admitMedia, executeMedia, readJsonObject, sendMedia, settleMedia, unitsCharge } from './run.ts';
import type { VideoJob, VideoJobStore } from '../../stores/video-jobs/types.ts';

/** OpenAI's default clip length when `seconds` is absent. */
export const DEFAULT_VIDEO_SECONDS = 4;
/** The longest clip accepted (and so the largest estimate). */
export const MAX_VIDEO_SECONDS = 60;

export function videoSeconds(value: unknown): number {
  if (value === undefined) return DEFAULT_VIDEO_SECONDS;
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > MAX_VIDEO_SECONDS)
    throw invalidParam('seconds', `must be a whole number of seconds from 1 to ${MAX_VIDEO_SECONDS}`);
  return n;
}

const newId = (): string => `video_${randomBytes(16).toString('hex')}`;

/** The caller sees Gantry's id; the upstream's stays inside. */
const shown = (record: Record<string, unknown>, job: VideoJob, remixOf?: string) => ({
  ...record,
  id: job.id,
  model: job.model,
  ...(remixOf !== undefined && { remixed_from_video_id: remixOf }),
});

function reportedSeconds(record: Record<string, unknown>, asked: number): number {
  const s = Number(record.seconds);
  return Number.isFinite(s) && s > 0 ? Math.min(s, MAX_VIDEO_SECONDS) : asked;
}

export interface VideoResult extends Served {
  record: Record<string, unknown>;
  costUsd: number;
}

/** POST /v1/videos (and /v1/videos/generations), and remix (`source` = the owned job remixed). */
export async function createVideo(
  deps: PipelineDeps,
  ctx: RequestContext,
  store: VideoJobStore,
  fields: Record<string, unknown>,
  body: MediaBody,
  source?: VideoJob,
): Promise<VideoResult> {
  const model = source?.model ?? fields.model;
  if (typeof model !== 'string' || model === '') throw invalidParam('model', 'is required');
  if (typeof fields.prompt !== 'string' || fields.prompt.trim() === '')
    throw invalidParam('prompt', 'is required');
  // A remix is as long as its source.
  const seconds = source ? source.seconds : videoSeconds(fields.seconds);
  const routing = await admitMedia(deps, ctx, {
    endpoint: 'videos',
    path: source ? '/v1/videos/{video_id}/remix' : '/v1/videos',
    model,
    capability: 'video',
    unit: 'perSecond',
    estimateUnits: seconds,
  });
  const routed = await executeMedia(
    deps,
    ctx,
    // A job (billed per second upstream) is never started twice by a retry.
    source
      ? {
          ...routing,
          createsObject: true,
          filter: (d) => d.name === source.deployment,
          // The provider may have expired the source: the caller's 404, not the deployment's fault.
          missingObject: missingObjects(ctx, [
            {
              param: 'video_id',
              upstreamId: source.upstreamId,
              kind: 'video',
              message: `video ${source.id} not found upstream`,
            },
          ]),
        }
      : { ...routing, createsObject: true },
    async (call) => {
      const res = await sendMedia(call, source ? 'videos/remix' : 'videos', body, false, source?.upstreamId);
      const record = await readJsonObject(call, res);
      if (typeof record.id !== 'string')
        throw new UpstreamFailure({ kind: 'server', status: 200, message: 'upstream video job has no id' });
      return record;
    },
    // Left once sent: the provider makes (and bills) the job anyway, though no one will ever
    // learn its id; charged the seconds asked, what the answer is charged when it reports none.
    unitsCharge('perSecond', seconds),
  );
  const billed = reportedSeconds(routed.value, seconds);
  const job: VideoJob = {
    id: newId(),
    seconds: billed,
    upstreamId: routed.value.id as string,
    tenant: ctx.tenant.name,
    keyId: ctx.key.id,
    model,
    deployment: routed.deployment.name,
    createdAt: Date.now(),
  };
  await store.put(job);
  const cost = await settleMedia(deps, ctx, routed, 'perSecond', billed);
  return {
    record: shown(routed.value, job, source?.id),
    costUsd: cost,
    deployment: routed.deployment,
    log: routed.log,
  };
}

/**
 * A read of a job (its record or content): the key's rate limit counts it before the lookup,
 * so an unknown id counts too and a key past its limit never reaches the provider; then the
 * caller's job, with its model on the usage record.
 */
export async function beginVideoRead(
  deps: PipelineDeps,
  ctx: RequestContext,
  store: VideoJobStore,
  id: string,
): Promise<VideoJob> {
  // A key that spent all of its budget on a video can still read and download that video.
  await admitRead(deps, ctx, 'videos');
  const job = await findJob(ctx, store, id);
  ctx.usage.requestedModel = job.model;
  return job;
}

/** A read answered: recorded at no cost on the deployment holding the job, which served it. */
export async function settleVideoRead(
  deps: PipelineDeps,
  ctx: RequestContext,
  job: VideoJob,
): Promise<Served> {
  const deployment = holder(ctx, job);
  await settle(deps, ctx, { status: 200, deployment, attempts: 1, costUsd: 0 });
  return { deployment, log: { attempts: 1, failed: [] } };
}

/** The caller's job, or a 404 that does not say whether it exists for someone else. */
export async function findJob(ctx: RequestContext, store: VideoJobStore, id: string): Promise<VideoJob> {
  const job = await store.get({ tenant: ctx.tenant.name, keyId: ctx.key.id }, id);
  if (!job) throw new GatewayError('not_found', `video ${id} not found`);
  return job;
}

/** The deployment holding `job`, while the key may still use its model (as for files and batches). */
function holder(ctx: RequestContext, job: VideoJob): Deployment {
  const d = ctx.snapshot.models.get(job.model)?.deployments.find((x) => x.name === job.deployment);
  if (!d || !mayUse(ctx, job.model))
    throw new GatewayError(
      'not_found',
      `video ${job.id} is held by deployment ${job.deployment}, which is no longer configured for this key`,
      { param: 'video_id' },
    );
  return d;
}

/** GET the job record or its content from the deployment that holds it. */
export async function readVideo(
  deps: PipelineDeps,
  ctx: RequestContext,
  job: VideoJob,
  what: 'videos/retrieve' | 'videos/content',
): Promise<UpstreamResponse> {
  const call = callContext(deps, ctx, holder(ctx, job));
  try {
    return await sendMedia(call, what, { kind: 'none' }, what === 'videos/content', job.upstreamId);
  } catch (err) {
    if (err instanceof UpstreamFailure) {
      const status = err.upstream.status === 404 ? 'not_found' : 'upstream_error';
      throw new GatewayError(
        status,
        status === 'not_found' ? `video ${job.id} not found upstream` : err.message,
      );
    }
    throw err;
  }
}

export async function videoRecord(deps: PipelineDeps, ctx: RequestContext, job: VideoJob) {
  const res = await readVideo(deps, ctx, job, 'videos/retrieve');
  const record = await readJsonObject(callContext(deps, ctx, holder(ctx, job)), res).catch((err: unknown) => {
    throw err instanceof UpstreamFailure ? new GatewayError('upstream_error', err.message) : err;
  });
  return { record: shown(record, job), served: await settleVideoRead(deps, ctx, job) };
}
