/**
 * A budgeted job's ownership record (its hold's id and its queue place) as reads see it: an
 * upstream 404 on the job, or an answer, counts towards (or clears) its going as the job
 * sweep's do (resources/not-found.ts). Only reads through the creating deployment count: another
 * deployment's 404 says only that it cannot read the job.
 */
import type { Stores } from '../../stores/index.ts';
import { ownedBy, type OwnedRecord } from '../../stores/ownership/types.ts';
import type { BudgetLimit } from '../../stores/budget.ts';
import type { HeldWork } from '../resources/held-work.ts';
import { foundUpstream, missingUpstream } from '../resources/not-found.ts';
import { legacyId } from './creator.ts';
import { settlementId, type JobRef, type Owner } from './jobs.ts';

/** The upstream id within a record's id (`<creating deployment>/<upstream id>`). */
export const upstreamIdOf = (record: OwnedRecord): string | undefined =>
  record.id.startsWith(`${record.deployment}/`) ? record.id.slice(record.deployment.length + 1) : undefined;

/**
 * A job gone for good, as held work settled at $0 under its record's id (the upstream's creation
 * time, as every claim of it names it). Its `~legacy` id is marked too: were it a creator-less
 * job found again after its record went, a read naming it so finds it settled, not owed.
 */
export const releasedJob = (record: OwnedRecord, upstreamId: string): HeldWork => ({
  scope: 'fine_tuning_job',
  tenant: record.tenant,
  keyId: record.keyId,
  claim: { id: record.id, createdAt: record.createdAt },
  noun: 'fine-tuning job',
  marksSettled: [legacyId(record.keyId, upstreamId)],
});

/** The owner's record of the job `ref` names, when `ref` names its creating deployment. */
async function recordOf(
  stores: Pick<Stores, 'ownership'>,
  owner: Owner,
  ref: JobRef,
): Promise<OwnedRecord | undefined> {
  const id = settlementId(ref.deployment, ref.upstreamId);
  const record = ownedBy(await stores.ownership.get(owner.tenant, 'fine_tuning_job', id), owner);
  return record?.deployment === ref.deployment ? record : undefined;
}

/** A read met the creator's 404: marked; gone for good, the job's hold is released at $0. */
export async function jobMissing(
  stores: Pick<Stores, 'ownership' | 'budgets'>,
  owner: Owner,
  ref: JobRef,
  budget: BudgetLimit | undefined,
  now: number,
): Promise<void> {
  const record = await recordOf(stores, owner, ref);
  if (record)
    await missingUpstream(stores, record, now, { work: releasedJob(record, ref.upstreamId), budget });
}

/** A read found the job on its creator: any 404 marks on its record are cleared. */
export async function jobFound(stores: Pick<Stores, 'ownership'>, owner: Owner, ref: JobRef): Promise<void> {
  const record = await recordOf(stores, owner, ref);
  if (record) await foundUpstream(stores, record);
}
