import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { invalidParam } from '../../errors.ts';
import type { PipelineDeps } from '../../pipeline/forward.ts';
import {
  cancelJob,
  createJob,
  listJobs,
  retrieveJob,
  type CreateJobRequest,
} from '../../pipeline/fine-tuning/run.ts';
import { formatUsd } from '../../accounting/cost.ts';
import { ResponseHeaders } from '../../brand.ts';
import type { RequestContext } from '../../pipeline/context.ts';
import type { RouteHooks } from './hooks.ts';

const open = { additionalProperties: true } as const;

export const CreateJobSchema = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 256 }),
    training_file: Type.String({ minLength: 1 }),
    validation_file: Type.Optional(Type.String({ minLength: 1 })),
    suffix: Type.Optional(Type.String({ maxLength: 64 })),
    seed: Type.Optional(Type.Integer()),
    metadata: Type.Optional(Type.Record(Type.String(), Type.String({ maxLength: 512 }))),
  },
  open,
);

const DEFAULT_LIMIT = 20;

function parseLimit(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_LIMIT;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 100)
    throw invalidParam('limit', 'must be an integer from 1 to 100');
  return n;
}

/** The call's headers plus what it charged (a read that saw a job succeed charges its training). */
const withCost = (ctx: RequestContext) => ({
  ...ctx.responseHeaders,
  [ResponseHeaders.cost]: formatUsd(ctx.served?.costUsd ?? 0),
});

const JobParams = Type.Object({ id: Type.String({ minLength: 1 }) });

export function fineTuningRoutes(app: FastifyInstance, deps: PipelineDeps, hooks: RouteHooks): void {
  app.post('/v1/fine_tuning/jobs', { schema: { body: CreateJobSchema } }, async (request, reply) => {
    const ctx = hooks.context(request, reply);
    const job = await createJob(deps, ctx, request.body as CreateJobRequest);
    reply.headers(withCost(ctx));
    return job;
  });
  // Query strings arrive as text (the app's ajv does not coerce): limit is read here.
  app.get('/v1/fine_tuning/jobs', async (request, reply) => {
    const ctx = hooks.context(request, reply);
    const q = request.query as Record<string, string | undefined>;
    const limit = parseLimit(q.limit);
    const list = await listJobs(deps, ctx, { limit, after: q.after });
    reply.headers(withCost(ctx));
    return list;
  });
  app.get('/v1/fine_tuning/jobs/:id', { schema: { params: JobParams } }, async (request, reply) => {
    const ctx = hooks.context(request, reply);
    const job = await retrieveJob(deps, ctx, (request.params as { id: string }).id);
    reply.headers(withCost(ctx));
    return job;
  });
  app.post('/v1/fine_tuning/jobs/:id/cancel', { schema: { params: JobParams } }, async (request, reply) => {
    const ctx = hooks.context(request, reply);
    const job = await cancelJob(deps, ctx, (request.params as { id: string }).id);
    reply.headers(withCost(ctx));
    return job;
  });
}
