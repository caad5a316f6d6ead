/**
 * `/v1/fine_tuning/jobs`: create through the router on a deployment with the `fine_tuning`
 * capability; list, retrieve and cancel on the deployment that holds the job, answering
 * only the tenant and key that created it (anyone else gets the 404 an unknown id gets).
 * Training is billed when it has happened: the first read (retrieve or list, on any pod) that
 * sees a job succeeded charges its trained tokens at the deployment's training price, once
 * per job; every other call is recorded at zero cost (see docs/decisions.md). Until a read or
 * the job sweep (sweep.ts) sees a budgeted job finished, its worst case stays held against the
 * key's budget (every endpoint's spend), as an unsettled batch's does: the create's hold, kept
 * under the job's id.
 */
import type { Deployment } from '../../config/snapshot.ts';
import { GatewayError, invalidParam } from '../../errors.ts';
import { toGatewayError } from '../../router/errors.ts';
import { UpstreamFailure } from '../../router/upstream.ts';
import { admitRequest, reserveHold } from '../admission.ts';
import { accessibleRoute, mayUse, type RequestContext } from '../context.ts';
import { callContext, missingObjects, routeRequest, type PipelineDeps } from '../forward.ts';
import { passthroughCall } from '../passthrough/call.ts';
import { settle, settleAnswered } from '../settlement.ts';
import { statesWorkHeld } from '../budget-refusal.ts';
import { namedObjects, resolveReferences } from '../resources/owned.ts';
import type { NamedObject } from '../../router/lost-object.ts';
import { heldRefusal, outstanding } from '../resources/batches.ts';
import { chargeThenClaim, retainHold } from '../resources/held-work.ts';
import { jobCreator, namesCreator } from './creator.ts';
import { jobFound, jobMissing } from './held-record.ts';
import {
  clientView,
  createdOn,
  heldJob,
  creatorOf,
  isFinishedJob,
  jobCreatedAtMs,
  jobModelOf,
  jobSettlementId,
  OWNER_KEYS,
  ownedBy,
  ownedMetadata,
  MAX_EPOCHS,
  parseJobId,
  pricedTraining,
  settlementId,
  trainingCharge,
  trainingHoldUsd,
  worstCaseEpochs,
  type Owner,
} from './jobs.ts';

export interface CreateJobRequest {
  model: string;
  training_file: string;
  metadata?: Record<string, unknown> | undefined;
  [key: string]: unknown;
}

const ownerOf = (ctx: RequestContext): Owner => ({ tenant: ctx.tenant.name, keyId: ctx.key.id });

const notFound = (id: string) =>
  new GatewayError('not_found', `fine-tuning job ${id} not found`, { param: 'fine_tuning_job_id' });

const describe = (ctx: RequestContext, model: string | undefined): void => {
  Object.assign(ctx.usage, { endpoint: 'fine_tuning', requestedModel: model ?? '', stream: false });
};

/**
 * Reads and cancels take the rate limit alone, no hold: a key whose budget is spent must
 * still see and stop the jobs it started (a $0 hold is refused at $0 left), and the training
 * a read finds done is charged outside any hold (`chargeTraining`), as the batch sweep does.
 */
async function beginRead(deps: PipelineDeps, ctx: RequestContext): Promise<void> {
  describe(ctx, undefined);
  ctx.admission = await admitRequest(deps, ctx);
}

export async function createJob(
  deps: PipelineDeps,
  ctx: RequestContext,
  req: CreateJobRequest,
): Promise<Record<string, unknown>> {
  describe(ctx, req.model);
  const route = accessibleRoute(ctx, req.model);
  if (!route.capabilities.has('fine_tuning'))
    throw invalidParam(
      'model',
      `model ${req.model} has no deployment with the fine_tuning capability; fine-tuning needs one`,
    );
  const body = { ...req, metadata: ownedMetadata(req.metadata, ownerOf(ctx), req.model) };
  // The rate limit first, so a create failing on its files counts too; the hold depends on the
  // training file and the deployment holding it, so it is reserved once they are known.
  ctx.admission = await admitRequest(deps, ctx);
  const holder = await trainingFilesHolder(deps, ctx, req);
  const epochs = worstCaseEpochs(req);
  const jobUsd = trainingHoldUsd(
    holder?.trainingTokens ?? 0,
    epochs.epochs,
    holder?.deployment.pricing?.trainingPerMillionTokens,
  );
  // The job is charged when a read sees it succeeded, hours later: its worst case is held now,
  // and kept held under the job's id once it exists, beside everything else the key spends.
  const budgeted = ctx.key.spec.budget !== undefined;
  await reserveHold(deps, ctx, jobUsd).catch(async (err: unknown) => {
    if (!(err instanceof GatewayError && err.type === 'budget_exceeded')) throw err;
    // Setting n_epochs helps only when the epochs are what is held: not for a $0 hold (no
    // training price, or a file counted while the key had no budget) refused at $0 left.
    const refusal =
      !epochs.fixed && jobUsd > 0
        ? new GatewayError(
            'budget_exceeded',
            `${err.message}: n_epochs left to the provider is held at its most, ${MAX_EPOCHS} epochs; set hyperparameters.n_epochs (or method.<type>.hyperparameters.n_epochs) to hold only what the job trains`,
            { headers: err.headers },
          )
        : err;
    const held = await outstanding(deps, ctx, 'fine_tuning_job').catch(() => ({ count: 0, usd: 0 }));
    // The epochs' note wraps the store's refusal: whether that stated the held amount is asked of it.
    const until = 'a read sees them finished';
    throw heldRefusal(refusal, held, 'fine-tuning job', 'fine-tuning jobs', until, statesWorkHeld(err));
  });
  const routing = routeRequest(ctx, req.model, ['fine_tuning']);
  const routed = await deps.router.execute(
    // A training job is never started twice by a retry.
    holder
      ? {
          ...routing,
          createsObject: true,
          filter: (d) => d.name === holder.deployment.name,
          // A training or validation file the provider no longer holds is the caller's 404
          // naming it, not the deployment's fault.
          missingObject: missingObjects(ctx, holder.objects),
        }
      : { ...routing, createsObject: true },
    (d) => passthroughCall(callContext(deps, ctx, d), 'POST', 'fine_tuning/jobs', createdOn(body, d.name)),
  );
  // Held under the job's id before the request settles (which would release it). The job
  // exists upstream whatever happens here: hiding it behind a 5xx would leave it running unseen
  // and invite a retry that starts a second one. The record only names it in later 402s.
  const job = settlementId(routed.deployment.name, String(routed.value.id));
  await retainHold(deps, ctx, 'fine_tuning_job', job);
  if (budgeted && jobUsd > 0)
    await recordWorstCase(deps, ctx, routed, req.model, jobUsd).catch((err: unknown) => {
      ctx.log.error(
        { job, err: String(err) },
        'fine-tuning job created, but its worst case could not be recorded: later 402s will not name it',
      );
    });
  await settleAnswered(deps, ctx, routed, 0);
  return clientView(routed.value, routed.deployment.name);
}

async function recordWorstCase(
  deps: PipelineDeps,
  ctx: RequestContext,
  routed: { value: Record<string, unknown>; deployment: Deployment },
  model: string,
  worstCaseUsd: number,
): Promise<void> {
  const createdAt = jobCreatedAtMs(routed.value);
  await deps.stores.ownership.put({
    family: 'fine_tuning_job',
    id: settlementId(routed.deployment.name, String(routed.value.id)),
    ...ownerOf(ctx),
    deployment: routed.deployment.name,
    model,
    createdAt: Number.isFinite(createdAt) ? createdAt : Date.now(),
    estimateUsd: worstCaseUsd,
  });
}

/**
 * Training and validation files must be the caller's (a 404 naming the field otherwise, as
 * for any object kept upstream) and uploaded for `fine-tune` (OpenAI's rule too, and only
 * those carry the token count a job's hold is made of), and the job runs on the deployment
 * that holds them.
 */
async function trainingFilesHolder(
  deps: PipelineDeps,
  ctx: RequestContext,
  req: CreateJobRequest,
): Promise<
  { deployment: Deployment; objects: readonly NamedObject[]; trainingTokens: number | undefined } | undefined
> {
  const refs = (['training_file', 'validation_file'] as const).flatMap((field) => {
    const id = req[field];
    return typeof id === 'string' ? [{ field, family: 'file' as const, id }] : [];
  });
  const referred = await resolveReferences(deps, ctx, refs);
  if (!referred) return undefined;
  for (const { field, id } of refs) {
    const file = referred.records.find((r) => r.id === id);
    if (file && file.purpose !== 'fine-tune')
      throw invalidParam(
        field,
        `file ${id} was uploaded for purpose ${file.purpose ?? 'unknown'}; fine-tuning needs a file uploaded with purpose fine-tune`,
      );
  }
  const d = referred.deployment;
  if (d.model !== req.model || !d.capabilities.has('fine_tuning'))
    throw invalidParam(
      referred.field,
      `is held by deployment ${d.name}, which does not fine-tune model ${req.model}; upload it with x-gantry-model: ${req.model}`,
    );
  const training = referred.records.find((r) => r.id === req.training_file);
  return { deployment: d, objects: namedObjects(refs), trainingTokens: training?.trainingTokens };
}

function fineTuningDeployments(ctx: RequestContext): Deployment[] {
  const out: Deployment[] = [];
  for (const route of ctx.snapshot.models.values())
    if (mayUse(ctx, route.model))
      for (const d of route.deployments) if (d.capabilities.has('fine_tuning')) out.push(d);
  return out;
}

/** Object-addressed calls go to the one deployment holding the job: no failover, upstream 404 is ours. */
async function onDeployment(
  deps: PipelineDeps,
  ctx: RequestContext,
  d: Deployment,
  method: 'GET' | 'POST',
  operation: string,
  id: string,
): Promise<Record<string, unknown>> {
  try {
    return await passthroughCall(
      callContext(deps, ctx, d),
      method,
      operation,
      method === 'POST' ? {} : undefined,
      false,
    );
  } catch (err) {
    if (!(err instanceof UpstreamFailure)) throw err;
    if (err.upstream.status === 404) throw notFound(id);
    throw toGatewayError(err.upstream, d.name);
  }
}

async function ownedJob(
  deps: PipelineDeps,
  ctx: RequestContext,
  id: string,
): Promise<{ job: Record<string, unknown>; deployment: Deployment; upstreamId: string }> {
  const ref = parseJobId(id);
  const deployment = ref && fineTuningDeployments(ctx).find((d) => d.name === ref.deployment);
  if (!ref || !deployment) throw notFound(id);
  const path = `fine_tuning/jobs/${encodeURIComponent(ref.upstreamId)}`;
  // Only a budgeted job has a record (its hold) for a 404 to count on, or an answer to clear.
  const budget = ctx.key.spec.budget;
  const job = await onDeployment(deps, ctx, deployment, 'GET', path, id).catch(async (err: unknown) => {
    if (budget && err instanceof GatewayError && err.status === 404)
      await jobMissing(deps.stores, ownerOf(ctx), ref, budget, deps.now?.() ?? Date.now()).catch(
        (cause: unknown) => ctx.log.warn({ job: id, err: String(cause) }, 'not found upstream; record kept'),
      );
    throw err;
  });
  if (!ownedBy(job, ownerOf(ctx))) throw notFound(id);
  if (budget)
    await jobFound(deps.stores, ownerOf(ctx), ref).catch((cause: unknown) =>
      ctx.log.warn({ job: id, err: String(cause) }, 'found upstream; its 404 marks kept'),
    );
  return { job, deployment, upstreamId: ref.upstreamId };
}

/** Every fine-tuning deployment in the config, whoever may use it. */
const allFineTuning = (ctx: RequestContext): Deployment[] =>
  [...ctx.snapshot.models.values()]
    .flatMap((r) => r.deployments)
    .filter((d) => d.capabilities.has('fine_tuning'));

/**
 * The training charge a read of `job` settles: due the first time any read sees it succeeded
 * (a claim in the shared store makes it once across requests and pods), else nothing. A job
 * seen failed or cancelled is settled too, at nothing: that releases its hold. The money
 * replaces the hold before the claim is taken (`chargeThenClaim`), so a store that cannot take
 * it fails this read (503) and leaves the job to the next one, not charged at all.
 */
async function chargeFor(
  deps: PipelineDeps,
  ctx: RequestContext,
  job: Record<string, unknown>,
  deployment: Deployment,
): Promise<number> {
  if (!isFinishedJob(job)) return 0;
  // Named and priced by the creating deployment, not the reader: deployments sharing a
  // provider account all see the job, and it is charged once, at its creator's price.
  const owner = ownerOf(ctx);
  const {
    settlement: id,
    creator,
    alsoSettledAs,
    marksSettled,
  } = await jobCreator(deps.stores, owner, job, deployment.name, allFineTuning(ctx));
  const work = { ...heldJob(owner, id, job), alsoSettledAs, marksSettled };
  const price = pricedTraining(
    [...ctx.snapshot.models.values()].flatMap((r) => r.deployments),
    creator,
    [deployment, ...fineTuningDeployments(ctx)],
    jobModelOf(job),
  );
  const due = trainingCharge(job, price);
  if (!(await chargeThenClaim(deps.stores, ctx.key.spec.budget, work, due?.costUsd ?? 0)) || !due) return 0;
  ctx.log.info({ job: id, ...due }, 'fine-tuning job succeeded; training charged');
  return due.costUsd;
}

export async function retrieveJob(deps: PipelineDeps, ctx: RequestContext, id: string) {
  await beginRead(deps, ctx);
  const { job, deployment } = await ownedJob(deps, ctx, id);
  await settle(deps, ctx, { status: 200, deployment, costUsd: await chargeFor(deps, ctx, job, deployment) });
  return clientView(job, deployment.name);
}

export async function cancelJob(deps: PipelineDeps, ctx: RequestContext, id: string) {
  await beginRead(deps, ctx);
  const { deployment, upstreamId } = await ownedJob(deps, ctx, id);
  const path = `fine_tuning/jobs/${encodeURIComponent(upstreamId)}/cancel`;
  const job = await onDeployment(deps, ctx, deployment, 'POST', path, id);
  // Too late to cancel a job that already succeeded: its training is owed like any read's.
  await settle(deps, ctx, { status: 200, deployment, costUsd: await chargeFor(deps, ctx, job, deployment) });
  return clientView(job, deployment.name);
}

/** The caller's jobs on every fine-tuning deployment it may use, newest first, paged by id. */
export async function listJobs(
  deps: PipelineDeps,
  ctx: RequestContext,
  page: { limit: number; after: string | undefined },
) {
  await beginRead(deps, ctx);
  const owner = ownerOf(ctx);
  const filter = `metadata[${OWNER_KEYS.tenant}]=${encodeURIComponent(owner.tenant)}&metadata[${OWNER_KEYS.key}]=${encodeURIComponent(owner.keyId)}`;
  const seen = new Set<string>();
  // Deployments sharing one provider account list the same jobs: each is shown and settled
  // once, by its settlement id, under the deployment that created it when that one lists it.
  const found = new Map<string, { job: Record<string, unknown>; d: Deployment }>();
  for (const d of fineTuningDeployments(ctx)) {
    if (seen.has(d.name)) continue;
    seen.add(d.name);
    const body = await onDeployment(deps, ctx, d, 'GET', `fine_tuning/jobs?limit=100&${filter}`, 'list');
    const data = Array.isArray(body.data) ? (body.data as Record<string, unknown>[]) : [];
    // The filter is asked for, and checked again: an upstream that ignores it must not leak.
    for (const job of data) {
      if (!ownedBy(job, owner)) continue;
      // A job naming no creator (created before its metadata did) is the same job under every
      // deployment of its account: one entry by its upstream id.
      const id = namesCreator(job) ? jobSettlementId(job, d.name) : `unnamed:${String(job.id)}`;
      if (!found.has(id) || creatorOf(job, d.name) === d.name) found.set(id, { job, d });
    }
  }
  const jobs: Record<string, unknown>[] = [];
  let costUsd = 0;
  for (const { job, d } of found.values()) {
    costUsd += await chargeFor(deps, ctx, job, d);
    jobs.push(clientView(job, d.name));
  }
  jobs.sort((a, b) => Number(b.created_at ?? 0) - Number(a.created_at ?? 0));
  const start = page.after === undefined ? 0 : jobs.findIndex((j) => j.id === page.after) + 1;
  const data = jobs.slice(start, start + page.limit);
  await settle(deps, ctx, { status: 200, costUsd });
  return { object: 'list', data, has_more: jobs.length > start + page.limit };
}
