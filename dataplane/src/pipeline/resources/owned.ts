/**
 * The owned-resource mechanism every family shares: create through the router on a deployment
 * able to hold the object and record its owner; reach an object only through its owner's
 * record (anyone else gets the 404 of an unknown id, and no upstream call is made); list from
 * the caller's records; delete upstream, then the record.
 */
import type { Deployment } from '../../config/snapshot.ts';
import { GatewayError, invalidParam } from '../../errors.ts';
import { toGatewayError } from '../../router/errors.ts';
import type { AttemptLog, Routed, RouteRequest } from '../../router/router.ts';
import { readJsonObject } from '../../router/calls.ts';
import { UpstreamFailure, type UpstreamResponse } from '../../router/upstream.ts';
import { lostObject, type NamedObject } from '../../router/lost-object.ts';
import { ownedBy, type Family, type Owner, type OwnedRecord } from '../../stores/ownership/types.ts';
import { admit, admitRequest } from '../admission.ts';
import { mayUse, unknownModel, type RequestContext } from '../context.ts';
import { callContext, routeRequest, type PipelineDeps } from '../forward.ts';
import { FAMILY, type FamilySpec } from './families.ts';
import { heldBatch } from './held-work.ts';
import { foundUpstream, missingUpstream, type Release } from './not-found.ts';
import { pageOf, type ListQuery } from './paging.ts';
import { sendResource, type HttpMethod, type ResourceBody } from './proxy.ts';
import { checkObjectId, type Reference } from './references.ts';
import { commonDeployment, placement } from './select.ts';

export const ownerOf = (ctx: RequestContext): Owner => ({ tenant: ctx.tenant.name, keyId: ctx.key.id });

export type Json = Record<string, unknown>;

/** Which deployment answered and how many attempts it took: the X-Gantry-* headers. */
export interface ServedBy {
  deployment: Deployment;
  log: AttemptLog;
}

export const notFound = (spec: FamilySpec, id: string, param = spec.param) =>
  new GatewayError('not_found', `${spec.noun} ${id} not found`, { param });

/**
 * Usage-record fields, then the rate limit and budget (a price only where one applies).
 * `'free'`: the rate limit alone, for reads that can cost nothing (no hold, so a key whose
 * budget is spent still reads and downloads what it has).
 */
export async function begin(
  deps: PipelineDeps,
  ctx: RequestContext,
  spec: FamilySpec,
  model: string | undefined,
  unitCostUsd: number | 'free' = 0,
  ceilingUsd?: number,
): Promise<void> {
  Object.assign(ctx.usage, { endpoint: spec.endpoint, requestedModel: model ?? '', stream: false });
  if (unitCostUsd === 'free') {
    ctx.admission = await admitRequest(deps, ctx);
    return;
  }
  ctx.admission = await admit(
    deps,
    ctx,
    () => [],
    () => 0,
    { maxTokens: 0, unitCostUsd, ceilingUsd },
  );
}

/** The deployment holding `record`, while the key may still use its model. */
export function holderOf(ctx: RequestContext, spec: FamilySpec, record: OwnedRecord): Deployment {
  const d = ctx.snapshot.models.get(record.model)?.deployments.find((x) => x.name === record.deployment);
  if (!d || !mayUse(ctx, record.model))
    throw new GatewayError(
      'not_found',
      `${spec.noun} ${record.id} is held by deployment ${record.deployment}, which is no longer configured for this key`,
      { param: spec.param },
    );
  return d;
}

/** The caller's record of `id`, or the 404 an unknown id gets, whoever else owns it. */
export async function findOwned(
  deps: PipelineDeps,
  ctx: RequestContext,
  family: Family,
  id: string,
  param?: string,
): Promise<OwnedRecord> {
  const record = ownedBy(await deps.stores.ownership.get(ctx.tenant.name, family, id), ownerOf(ctx));
  if (!record) throw notFound(FAMILY[family], id, param);
  return record;
}

/** Admission (the rate limit counts every call, found or not), then the caller's record. */
export async function beginOnOwned(
  deps: PipelineDeps,
  ctx: RequestContext,
  family: Family,
  id: string,
  /** A priced call's price, `'free'` for a read that can cost nothing; else a $0 hold. */
  unitCostUsd?: 'free' | ((record: OwnedRecord, holder: Deployment) => number),
): Promise<OwnedRecord> {
  const spec = FAMILY[family];
  if (typeof unitCostUsd === 'function') {
    // A priced call (search) holds its price, which depends on the holder: look first.
    const record = await findOwned(deps, ctx, family, id);
    await begin(deps, ctx, spec, record.model, unitCostUsd(record, holderOf(ctx, spec, record)));
    return record;
  }
  await begin(deps, ctx, spec, undefined, unitCostUsd);
  const record = await findOwned(deps, ctx, family, id);
  ctx.usage.requestedModel = record.model;
  return record;
}

/**
 * Distinct objects one request may name. A body can repeat one id in as many parts as its size
 * allows (200,000 in 9 MB); each distinct id costs a store lookup, so they are counted once
 * and bounded, like A2A's reference task ids.
 */
export const MAX_REFERENCED_OBJECTS = 256;

/** The first reference to each object, in order; a 400 naming the field past the bound. */
export function distinctReferences(refs: readonly Reference[]): Reference[] {
  const seen = new Set<string>();
  const out: Reference[] = [];
  for (const r of refs) {
    const key = `${r.family}\0${r.id}`;
    if (seen.has(key)) continue;
    if (out.length === MAX_REFERENCED_OBJECTS)
      throw invalidParam(r.field, `a request may name at most ${MAX_REFERENCED_OBJECTS} distinct objects`);
    seen.add(key);
    out.push(r);
  }
  return out;
}

/** Every referenced object must be the caller's; they must share one deployment, which is returned. */
export async function resolveReferences(
  deps: PipelineDeps,
  ctx: RequestContext,
  named: readonly Reference[],
): Promise<{ deployment: Deployment; field: string; records: OwnedRecord[] } | undefined> {
  for (const r of named) checkObjectId(r.field, r.id);
  const refs = named.length > 1 ? distinctReferences(named) : named;
  const records = await Promise.all(refs.map((r) => findOwned(deps, ctx, r.family, r.id, r.field)));
  const common = commonDeployment(
    records.map((r, i) => ({ field: refs[i]!.field, deployment: r.deployment })),
  );
  if (!common) return undefined;
  const first = records[0]!;
  return { deployment: holderOf(ctx, FAMILY[first.family], first), field: common.field, records };
}

/** References as the upstream knows them (Gantry shows upstream ids unchanged), one per field. */
export function namedObjects(refs: readonly Reference[]): NamedObject[] {
  return refs.map((r) => ({ param: r.field, upstreamId: r.id, kind: r.family }));
}

/** The upstream's object, as the caller sees it: the model name the caller knows. */
export function clientView(spec: FamilySpec, record: Pick<OwnedRecord, 'model'>, object: Json): Json {
  if ((spec.family === 'assistant' || spec.family === 'batch') && typeof object.model === 'string')
    return { ...object, model: record.model };
  return object;
}

/**
 * When the upstream deletes the object. Only a file's `expires_at` means that: a batch's is
 * its completion deadline (the batch stays readable), a vector store's moves with activity.
 */
const expiryMs = (spec: FamilySpec, object: Json): number | undefined =>
  spec.family === 'file' && typeof object.expires_at === 'number' && object.expires_at > 0
    ? object.expires_at * 1000
    : undefined;

export interface CreateRequest {
  body: (deployment: Deployment) => ResourceBody;
  refs?: readonly Reference[];
  /** The body's `model`, or the `x-gantry-model` header. */
  model?: string | undefined;
  /** Further capabilities the deployment needs (a batch input file needs `batches` too). */
  alsoNeeds?: FamilySpec['capability'][];
  purpose?: string | undefined;
  /** Checks on the referenced records before anything goes upstream (a batch's file purpose). */
  check?: (records: readonly OwnedRecord[]) => void;
  /**
   * Held against the budget while the object is created (a batch's worst case, at most the
   * estimator's $1e9), then released unless the caller retains it under the object's id.
   */
  holdUsd?: number | undefined;
  /** Kept on the record: what the object may still cost (a batch's worst case, until it settles). */
  estimateUsd?: number | undefined;
}

/** Create the object upstream, record its owner, return it with the routing facts. */
export async function createOwned(
  deps: PipelineDeps,
  ctx: RequestContext,
  spec: FamilySpec,
  req: CreateRequest,
): Promise<{ object: Json; record: OwnedRecord; served: ServedBy }> {
  // Admission first: a request that fails on a reference still counts against the rate limit.
  await begin(deps, ctx, spec, req.model, req.holdUsd);
  const referred = await resolveReferences(deps, ctx, req.refs ?? []);
  req.check?.(referred?.records ?? []);
  const place = placement({
    models: ctx.snapshot.models,
    allowed: (m) => mayUse(ctx, m),
    unknown: (m) => unknownModel(ctx, m),
    capability: spec.capability,
    what: `${spec.noun}s`,
    requestedModel: req.model,
    pinned: referred && { deployment: referred.deployment, field: referred.field },
  });
  ctx.usage.requestedModel = place.kind === 'pinned' ? place.deployment.model : place.model;
  const needs = [spec.capability, ...(req.alsoNeeds ?? [])];
  const routing: RouteRequest =
    place.kind === 'pinned'
      ? {
          ...routeRequest(ctx, place.deployment.model, needs),
          filter: (d: Deployment) => d.name === place.deployment.name,
        }
      : routeRequest(ctx, place.model, needs);
  // An attempt that may have created the object is not repeated: the copy would be orphaned
  // upstream (a batch run and billed twice), unknown to its owner.
  routing.createsObject = true;
  const routed: Routed<Json> = await deps.router.execute(routing, async (d) => {
    const call = callContext(deps, ctx, d);
    const res = await sendResource(call, 'POST', spec.path, req.body(d), spec.upstreamHeaders).catch(
      (err: unknown) => {
        // A referenced object the holder no longer has is the caller's problem, not a fault
        // of the deployment (the router would count a 404 against its health); a 404 that
        // names none of them (a misrouted deployment) is the deployment's, as the router's.
        const lost =
          referred && err instanceof UpstreamFailure
            ? lostObject(err.upstream, namedObjects(req.refs ?? []))
            : undefined;
        if (lost && err instanceof UpstreamFailure) {
          ctx.log.warn(
            {
              deployment: d.name,
              upstreamStatus: err.upstream.status,
              upstreamMessage: err.upstream.message,
              lost: lost.param,
            },
            'upstream no longer holds a named object',
          );
          throw new GatewayError('not_found', err.upstream.message || `${lost.upstreamId} not found`, {
            param: lost.param,
          });
        }
        throw err;
      },
    );
    const object = await readJsonObject(call, res);
    if (typeof object.id !== 'string' || object.id === '')
      throw new UpstreamFailure({ kind: 'server', status: 200, message: `upstream ${spec.noun} has no id` });
    return object;
  });
  const object = routed.value;
  const record: OwnedRecord = {
    family: spec.family,
    id: object.id as string,
    ...ownerOf(ctx),
    deployment: routed.deployment.name,
    model: routed.deployment.model,
    createdAt: Date.now(),
    expiresAt: expiryMs(spec, object),
    purpose: req.purpose,
    ...(req.estimateUsd !== undefined && { estimateUsd: req.estimateUsd }),
  };
  await deps.stores.ownership.put(record);
  return {
    object: clientView(spec, record, object),
    record,
    served: { deployment: routed.deployment, log: routed.log },
  };
}

/**
 * A call on the deployment holding an owned object. No failover (the object lives there
 * only) and no health penalty for a missing object: the caller gets the upstream's 404, and it
 * is marked on the record, which goes (releasing a batch's hold) only once the object is gone
 * for good (gone.ts); an answer clears the marks.
 */
export async function onHolder(
  deps: PipelineDeps,
  ctx: RequestContext,
  spec: FamilySpec,
  record: OwnedRecord,
  method: HttpMethod,
  operation: string,
  body: ResourceBody = { kind: 'none' },
  stream = false,
): Promise<{ res: UpstreamResponse; deployment: Deployment }> {
  const deployment = holderOf(ctx, spec, record);
  try {
    const res = await sendResource(
      callContext(deps, ctx, deployment),
      method,
      operation,
      body,
      spec.upstreamHeaders,
      stream,
    );
    await foundUpstream(deps.stores, record).catch((cause: unknown) => {
      ctx.log.warn({ [spec.family]: record.id, err: String(cause) }, 'found upstream; its 404 marks kept');
    });
    return { res, deployment };
  } catch (err) {
    if (!(err instanceof UpstreamFailure)) throw err;
    if (err.upstream.status === 404) {
      // Only the object itself missing counts, not a sub-resource missing.
      if (operation === objectPath(spec, record.id)) {
        const release: Release | undefined =
          record.family === 'batch' ? { work: heldBatch(record), budget: ctx.key.spec.budget } : undefined;
        const now = deps.now?.() ?? Date.now();
        await missingUpstream(deps.stores, record, now, release).catch((cause: unknown) => {
          ctx.log.warn({ [spec.family]: record.id, err: String(cause) }, 'not found upstream; record kept');
        });
      }
      throw new GatewayError(
        'not_found',
        `${spec.noun} ${record.id}: ${err.upstream.message || 'not found'}`,
        {
          param: spec.param,
        },
      );
    }
    throw toGatewayError(err.upstream, deployment.name);
  }
}

/** A JSON answer from the holder. */
export async function jsonOnHolder(
  deps: PipelineDeps,
  ctx: RequestContext,
  spec: FamilySpec,
  record: OwnedRecord,
  method: HttpMethod,
  operation: string,
  body?: ResourceBody,
): Promise<{ object: Json; served: ServedBy }> {
  const { res, deployment } = await onHolder(deps, ctx, spec, record, method, operation, body);
  const object = await readJsonObject(ctx, res).catch((err: unknown) => {
    throw err instanceof UpstreamFailure ? new GatewayError('upstream_error', err.message) : err;
  });
  return { object, served: { deployment, log: { attempts: 1, failed: [] } } };
}

export const objectPath = (spec: FamilySpec, id: string, sub = ''): string =>
  `${spec.path}/${encodeURIComponent(id)}${sub}`;

const LIST_CONCURRENCY = 8;

export interface ListedObject {
  record: OwnedRecord;
  /** As the deployment answered. */
  upstream: Json;
  /** As the caller sees it. */
  shown: Json;
}

/**
 * A page of the caller's objects, each read fresh from its deployment (states change
 * upstream: a batch progresses, a vector store counts its files). Objects gone upstream, or
 * on a deployment the key can no longer use, are left out.
 */
export async function listOwned(
  deps: PipelineDeps,
  ctx: RequestContext,
  spec: FamilySpec,
  query: ListQuery,
  keep: (r: OwnedRecord) => boolean = () => true,
): Promise<{ page: Json; listed: ListedObject[] }> {
  const all = (await deps.stores.ownership.list(ownerOf(ctx), spec.family)).filter(keep);
  const { records, hasMore } = pageOf(all, query);
  const found: (ListedObject | undefined)[] = new Array(records.length);
  let next = 0;
  const worker = async () => {
    while (next < records.length) {
      const i = next++;
      const r = records[i]!;
      try {
        const { object } = await jsonOnHolder(deps, ctx, spec, r, 'GET', objectPath(spec, r.id));
        found[i] = { record: r, upstream: object, shown: clientView(spec, r, object) };
      } catch (err) {
        if (!(err instanceof GatewayError && err.status === 404)) throw err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(LIST_CONCURRENCY, records.length) }, worker));
  const listed = found.filter((o): o is ListedObject => o !== undefined);
  const data = listed.map((l) => l.shown);
  return {
    page: {
      object: 'list',
      data,
      first_id: data[0]?.id ?? null,
      last_id: data.at(-1)?.id ?? null,
      has_more: hasMore,
    },
    listed,
  };
}

/** DELETE upstream, then forget the record (also when the upstream had already lost it). */
export async function deleteOwned(
  deps: PipelineDeps,
  ctx: RequestContext,
  spec: FamilySpec,
  record: OwnedRecord,
): Promise<{ object: Json; served: ServedBy }> {
  const out = await jsonOnHolder(deps, ctx, spec, record, 'DELETE', objectPath(spec, record.id));
  await deps.stores.ownership.delete(record);
  return out;
}
