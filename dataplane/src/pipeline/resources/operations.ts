/**
 * The calls every family answers the same way, on top of the owned-resource mechanism:
 * create, retrieve, update, delete, list, and the sub-resources of an owned object (vector
 * store files, container files), each settled at zero cost (providers do not meter these
 * calls either) unless a read observes a charge (a finished batch), and recorded under the
 * family's endpoint.
 */
import type { Deployment } from '../../config/snapshot.ts';
import type { UpstreamResponse } from '../../router/upstream.ts';
import type { Family, OwnedRecord } from '../../stores/ownership/types.ts';
import { invalidParam } from '../../errors.ts';
import type { RequestContext } from '../context.ts';
import type { PipelineDeps } from '../forward.ts';
import { settle, settleAnswered } from '../settlement.ts';
import { FAMILY } from './families.ts';
import type { ListQuery } from './paging.ts';
import {
  begin,
  beginOnOwned,
  clientView,
  createOwned,
  deleteOwned,
  holderOf,
  jsonOnHolder,
  listOwned,
  type ListedObject,
  objectPath,
  onHolder,
  resolveReferences,
  type CreateRequest,
  type Json,
  type ServedBy,
} from './owned.ts';
import type { HttpMethod, ResourceBody } from './proxy.ts';
import { referencesOf, type ReferringRequest } from './references.ts';

export interface Answer {
  object: Json;
  /** Absent for lists, which may span deployments. */
  served?: ServedBy;
  costUsd: number;
}

const free = async (deps: PipelineDeps, ctx: RequestContext, served: ServedBy) => {
  await settleAnswered(deps, ctx, served, 0);
};

/** The model named in a body, when a family takes one (assistants). */
function bodyModel(body: Json): string | undefined {
  if (body.model === undefined) return undefined;
  if (typeof body.model !== 'string' || body.model === '')
    throw invalidParam('model', 'must be a model name');
  return body.model;
}

export async function createResource(
  deps: PipelineDeps,
  ctx: RequestContext,
  family: Family,
  body: Json,
  headerModel: string | undefined,
  opts: {
    refs?: ReferringRequest | undefined;
    /** Keeps the create's hold past the request (a batch's worst case until it settles). */
    retain?: ((record: OwnedRecord) => Promise<void>) | undefined;
  } & Pick<CreateRequest, 'check' | 'holdUsd' | 'estimateUsd'> = {},
): Promise<Answer> {
  const spec = FAMILY[family];
  const model = bodyModel(body);
  if (family === 'assistant' && model === undefined) throw invalidParam('model', 'is required');
  const created = await createOwned(deps, ctx, spec, {
    // Only a body that names a model gets the deployment's own name for it.
    body: (d) => ({
      kind: 'json',
      json: model === undefined ? body : { ...body, model: d.target.upstreamModel },
    }),
    refs: opts.refs ? referencesOf(opts.refs, body) : [],
    model: model ?? headerModel,
    check: opts.check,
    holdUsd: opts.holdUsd,
    estimateUsd: opts.estimateUsd,
  });
  // Before the request settles, which would release the hold.
  await opts.retain?.(created.record);
  await free(deps, ctx, created.served);
  return { object: created.object, served: created.served, costUsd: 0 };
}

/** What a read observed that costs money (a finished batch), charged with the read. */
export interface Charge {
  costUsd: number;
  usage?: { prompt_tokens: number; completion_tokens: number } | undefined;
  /** Whose prices applied: spend is counted per deployment. */
  deployment?: Deployment | undefined;
  /**
   * The object is over for good (a finished batch): once the charge is recorded, the
   * settlement sweep need not look at it again. Not before: a charge lost on the way must
   * leave it queued.
   */
  finished?: boolean;
}

export type Observer = (record: OwnedRecord, object: Json) => Promise<Charge>;

/**
 * A finished batch's tokens were spent over hours, offline: they are charged and recorded, but
 * not counted against the key's tokens-per-minute window (the read itself counted as a request).
 */
function keepTokensOffTheMinute(ctx: RequestContext): void {
  if (ctx.admission) ctx.admission.ticket = undefined;
}

const NOTHING: Observer = async () => ({ costUsd: 0 });

/** GET (or a state-changing POST such as a batch cancel) on an owned object, settled with what it observed. */
export async function readResource(
  deps: PipelineDeps,
  ctx: RequestContext,
  family: Family,
  id: string,
  observe: Observer = NOTHING,
  action?: { method: HttpMethod; sub: string },
): Promise<Answer> {
  const spec = FAMILY[family];
  // No budget hold (a $0 hold is refused at $0 left), so a spent key still reads its objects
  // and cancels its batches; a charge the read finds due (a finished batch) is taken by the
  // observer outside any hold.
  const record = await beginOnOwned(deps, ctx, family, id, 'free');
  const { object, served } = await jsonOnHolder(
    deps,
    ctx,
    spec,
    record,
    action?.method ?? 'GET',
    objectPath(spec, id, action?.sub),
    action?.method === 'POST' ? { kind: 'json', json: {} } : undefined,
  );
  const charge = await observe(record, object);
  if (charge.usage) keepTokensOffTheMinute(ctx);
  await settleAnswered(deps, ctx, served, charge.costUsd, charge.usage);
  if (charge.finished) await deps.stores.ownership.swept(record, true);
  return { object: clientView(spec, record, object), served, costUsd: charge.costUsd };
}

/** POST /v1/{family}/{id}: modify. An object stays on its deployment, and so does what it refers to. */
export async function updateResource(
  deps: PipelineDeps,
  ctx: RequestContext,
  family: Family,
  id: string,
  body: Json,
  refsOf: ReferringRequest | undefined,
): Promise<Answer> {
  const spec = FAMILY[family];
  const record = await beginOnOwned(deps, ctx, family, id);
  const model = bodyModel(body);
  if (model !== undefined && model !== record.model)
    throw invalidParam(
      'model',
      `${spec.noun} ${id} is held by a deployment of model ${record.model} and cannot move to ${model}; create a new ${spec.noun} instead`,
    );
  const referred = await resolveReferences(deps, ctx, refsOf ? referencesOf(refsOf, body) : []);
  if (referred && referred.deployment.name !== record.deployment)
    throw invalidParam(referred.field, `is held by another deployment than ${spec.noun} ${id}`);
  const json = { ...body };
  if (model !== undefined) json.model = holderOf(ctx, spec, record).target.upstreamModel;
  const { object, served } = await jsonOnHolder(deps, ctx, spec, record, 'POST', objectPath(spec, id), {
    kind: 'json',
    json,
  });
  await free(deps, ctx, served);
  return { object: clientView(spec, record, object), served, costUsd: 0 };
}

export async function deleteResource(
  deps: PipelineDeps,
  ctx: RequestContext,
  family: Family,
  id: string,
): Promise<Answer> {
  const spec = FAMILY[family];
  const record = await beginOnOwned(deps, ctx, family, id);
  const { object, served } = await deleteOwned(deps, ctx, spec, record);
  await free(deps, ctx, served);
  return { object, served, costUsd: 0 };
}

export async function listResources(
  deps: PipelineDeps,
  ctx: RequestContext,
  family: Family,
  query: ListQuery,
  keep?: (r: OwnedRecord) => boolean,
  observe: Observer = NOTHING,
): Promise<Answer> {
  const spec = FAMILY[family];
  // No budget hold: as for readResource, what a list finds due is charged by the observer.
  await begin(deps, ctx, spec, undefined, 'free');
  const { page, listed } = await listOwned(deps, ctx, spec, query, keep);
  // A list that shows finished batches charges them, once each, like a retrieve would. One
  // observation failing must not drop the charges the others claimed: those are settled, and
  // the failed one (nothing claimed, still queued) is charged by a later read or the sweep.
  const observed = await Promise.allSettled(listed.map((l: ListedObject) => observe(l.record, l.upstream)));
  const charges: Charge[] = [];
  const finished: OwnedRecord[] = [];
  observed.forEach((o, i) => {
    if (o.status === 'rejected') {
      ctx.log.warn(
        { [spec.family]: listed[i]!.record.id, err: (o.reason as Error).message },
        'listed object not observed; settled later',
      );
      return;
    }
    charges.push(o.value);
    if (o.value.finished) finished.push(listed[i]!.record);
  });
  const parts = charges.flatMap((c) =>
    c.usage && c.deployment ? [{ deployment: c.deployment, usage: c.usage, costUsd: c.costUsd }] : [],
  );
  const costUsd = parts.reduce((n, p) => n + p.costUsd, 0);
  const usage = {
    prompt_tokens: parts.reduce((n, p) => n + p.usage.prompt_tokens, 0),
    completion_tokens: parts.reduce((n, p) => n + p.usage.completion_tokens, 0),
  };
  if (parts.length > 0) keepTokensOffTheMinute(ctx);
  // Spend is counted under each charged batch's deployment, as for a continued stream's parts.
  await settle(deps, ctx, { status: 200, costUsd, usage, deployment: parts[0]?.deployment, parts });
  await Promise.all(finished.map((r) => deps.stores.ownership.swept(r, true)));
  return { object: page, costUsd };
}

/** A sub-resource call (`/vector_stores/{id}/files…`, `/containers/{id}/files…`) on the owner's object. */
export async function subResource(
  deps: PipelineDeps,
  ctx: RequestContext,
  family: Family,
  id: string,
  method: HttpMethod,
  /** A function when building it can refuse (a caller's file id): after admission, so the refusal counts. */
  subPath: string | (() => string),
  body?: ResourceBody,
  refsOf?: ReferringRequest,
): Promise<Answer> {
  const spec = FAMILY[family];
  const record = await beginOnOwned(deps, ctx, family, id, method === 'GET' ? 'free' : undefined);
  const sub = typeof subPath === 'string' ? subPath : subPath();
  if (refsOf && body?.kind === 'json') {
    const referred = await resolveReferences(deps, ctx, referencesOf(refsOf, body.json));
    if (referred && referred.deployment.name !== record.deployment)
      throw invalidParam(
        referred.field,
        `is held by deployment ${referred.deployment.name}, but ${spec.noun} ${id} by ${record.deployment}; both must be on one deployment`,
      );
  }
  const { object, served } = await jsonOnHolder(
    deps,
    ctx,
    spec,
    record,
    method,
    objectPath(spec, id, sub),
    body,
  );
  await free(deps, ctx, served);
  return { object, served, costUsd: 0 };
}

/** A binary sub-resource (a container file's content), streamed through. */
export async function subResourceBytes(
  deps: PipelineDeps,
  ctx: RequestContext,
  family: Family,
  id: string,
  subPath: string | (() => string),
): Promise<{ res: UpstreamResponse; served: ServedBy }> {
  const spec = FAMILY[family];
  const record = await beginOnOwned(deps, ctx, family, id, 'free');
  const sub = typeof subPath === 'string' ? subPath : subPath();
  const { res, deployment } = await onHolder(
    deps,
    ctx,
    spec,
    record,
    'GET',
    objectPath(spec, id, sub),
    { kind: 'none' },
    true,
  );
  const served = { deployment, log: { attempts: 1, failed: [] } };
  await free(deps, ctx, served);
  return { res, served };
}
