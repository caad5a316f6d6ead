/**
 * Which deployment a finished job's settlement is named by. Jobs created since their metadata
 * names the creator (`gantry_deployment`) are settled under it. Older jobs carry no creator:
 * their settlement was named by whichever deployment read them, so deployments sharing one
 * provider account each charged them once. For those, the job's ownership record (written at
 * create, under `<creator>/<upstream id>`, for a job that held money) names the creator; and a
 * settlement already taken under any other configured fine-tuning deployment's name counts as
 * the job's, so it is not charged again under a second name.
 */
import type { Deployment } from '../../config/snapshot.ts';
import type { Stores } from '../../stores/index.ts';
import { creatorOf, OWNER_KEYS, settlementId, type Owner } from './jobs.ts';

export interface JobCreator {
  /** The deployment the settlement is named by (the reader's name when nothing else tells). */
  settledBy: string;
  /** The creating deployment, when the metadata or the ownership record says which. */
  creator: string | undefined;
  /** Other settlement ids a job without a named creator may have been settled under. */
  alsoSettledAs: string[];
}

/** Whether the job's metadata names its creating deployment. */
export const namesCreator = (job: Record<string, unknown>): boolean => {
  const m = job.metadata;
  const named =
    typeof m === 'object' && m !== null ? (m as Record<string, unknown>)[OWNER_KEYS.deployment] : undefined;
  return typeof named === 'string' && named !== '';
};

export async function jobCreator(
  stores: Pick<Stores, 'ownership'>,
  owner: Owner,
  job: Record<string, unknown>,
  reader: string,
  fineTuning: readonly Deployment[],
): Promise<JobCreator> {
  if (namesCreator(job)) {
    const creator = creatorOf(job, reader);
    return { settledBy: creator, creator, alsoSettledAs: [] };
  }
  const upstreamId = String(job.id);
  const names = [...new Set([reader, ...fineTuning.map((d) => d.name)])];
  const records = await Promise.all(
    names.map((name) =>
      stores.ownership.get(owner.tenant, 'fine_tuning_job', settlementId(name, upstreamId)),
    ),
  );
  const creator = records.find((r) => r !== undefined && r.keyId === owner.keyId)?.deployment;
  const settledBy = creator ?? reader;
  return {
    settledBy,
    creator,
    alsoSettledAs: names.filter((n) => n !== settledBy).map((n) => settlementId(n, upstreamId)),
  };
}
