/**
 * The platform administrator's way out for held work whose hold should not wait for its
 * settlement or TTL (a batch or job the provider lost, an account closed): the work is settled
 * at $0 under its own settlement id, as when it is gone for good (not-found.ts), so its hold is
 * released once, nothing is charged, and no later read or sweep that finds it can charge it.
 * Its record stays: the caller may still read the work.
 */
import type { Snapshot } from '../../config/snapshot.ts';
import { GatewayError, invalidParam } from '../../errors.ts';
import type { Stores } from '../../stores/index.ts';
import type { OwnedRecord, SweptFamily } from '../../stores/ownership/types.ts';
import { releasedJob, upstreamIdOf } from '../fine-tuning/held-record.ts';
import { parseJobId, settlementId } from '../fine-tuning/jobs.ts';
import { heldBatch, releaseAtNothing } from './held-work.ts';
import { budgetOf } from './sweep.ts';

export const HELD_KINDS = ['batch', 'fine_tuning_job'] as const satisfies readonly SweptFamily[];

/** A release asked for: the work's tenant, kind and id (a job's as its caller sees it, or its settlement id). */
export interface ReleaseRequest {
  tenant: string;
  kind: SweptFamily;
  id: string;
}

/**
 * Longest fields accepted: a tenant is a Kubernetes object name; an id is an upstream's id, a
 * job's prefixed with its deployment's name. Longer ones name nothing, and are not echoed back.
 */
const MAX_CHARS = { tenant_id: 253, kind: 64, id: 1024 } as const;

/** Pure: the body checked, each problem a 400 naming its field. */
export function releaseRequest(body: unknown): ReleaseRequest {
  const b =
    typeof body === 'object' && body !== null && !Array.isArray(body)
      ? (body as Record<string, unknown>)
      : {};
  const text = (field: keyof typeof MAX_CHARS): string => {
    const v = b[field];
    if (typeof v !== 'string' || v === '') throw invalidParam(field, 'is required (a non-empty string)');
    if (v.length > MAX_CHARS[field])
      throw invalidParam(field, `must be at most ${MAX_CHARS[field]} characters`);
    return v;
  };
  const tenant = text('tenant_id');
  const kind = text('kind');
  if (!(HELD_KINDS as readonly string[]).includes(kind))
    throw invalidParam('kind', `must be one of ${HELD_KINDS.join(', ')}`);
  return { tenant, kind: kind as SweptFamily, id: text('id') };
}

/** The record id of the work: a job's caller-facing id names its creating deployment. */
function recordId(req: ReleaseRequest): string {
  if (req.kind !== 'fine_tuning_job') return req.id;
  const ref = parseJobId(req.id);
  return ref ? settlementId(ref.deployment, ref.upstreamId) : req.id;
}

export interface Released {
  record: OwnedRecord;
  /** False when the work was already settled (charged or released): nothing changed. */
  released: boolean;
}

export async function releaseHeld(
  stores: Pick<Stores, 'ownership' | 'budgets'>,
  snapshot: Snapshot,
  req: ReleaseRequest,
): Promise<Released> {
  const record = await stores.ownership.get(req.tenant, req.kind, recordId(req));
  if (!record)
    throw new GatewayError('not_found', `no held ${req.kind} ${req.id} in tenant ${req.tenant}`, {
      param: 'id',
    });
  const budget = budgetOf(snapshot, record);
  // Nothing held: "releasing" would only take the claim, and the work would never be charged.
  if (!budget || !(record.estimateUsd !== undefined && record.estimateUsd > 0))
    throw new GatewayError(
      'invalid_request_error',
      `${req.kind} ${req.id} holds nothing to release: ${budget ? 'it was created without a hold' : `its key ${record.keyId} has no budget now`}`,
      { status: 409, param: 'id' },
    );
  const work =
    record.family === 'batch' ? heldBatch(record) : releasedJob(record, upstreamIdOf(record) ?? record.id);
  const released = await releaseAtNothing(stores, budget, work);
  return { record, released };
}
