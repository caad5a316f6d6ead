/**
 * Which id a finished job's settlement is named by. Jobs created since their metadata names
 * the creator (`gantry_deployment`) are settled under it. Older jobs carry no creator: their
 * settlement was named by whichever deployment read them, so deployments sharing one provider
 * account each charged them once. For those, the job's ownership record (written at create,
 * under `<creator>/<upstream id>`, for a job that held money) names the creator; a job with no
 * record is settled under `~legacy/<upstream id>`, one id whoever reads it, so the once-only
 * claim is a single atomic step again (a name per reader let two reads at once both charge).
 * The upstream id alone is enough: the provider's job ids are unique (OpenAI's `ftjob-…` are
 * global), and the claim is per tenant besides; `~` is outside every deployment name, so it
 * names no deployment's job. A settlement taken under any configured fine-tuning deployment's
 * name, as reads before this change took them, counts as the job's (`alsoSettledAs`).
 */
import type { Deployment } from '../../config/snapshot.ts';
import type { Stores } from '../../stores/index.ts';
import { creatorOf, OWNER_KEYS, settlementId, type Owner } from './jobs.ts';

export interface JobCreator {
  /** The id the settlement is named by: `<creator>/<upstream id>`, or `~legacy/<upstream id>`. */
  settlement: string;
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

/** Not a deployment name (those are DNS labels): the settlement name of a job whose creator is unknown. */
const LEGACY = '~legacy';

/**
 * Ids a creator-less job may already be settled under other than `settlement`: each named
 * deployment's (the reader's, as reads before `~legacy` named them) and the `~legacy` one.
 */
export const formerSettlements = (
  upstreamId: string,
  names: readonly string[],
  settlement: string,
): string[] =>
  [...new Set([LEGACY, ...names])].map((n) => settlementId(n, upstreamId)).filter((id) => id !== settlement);

export async function jobCreator(
  stores: Pick<Stores, 'ownership'>,
  owner: Owner,
  job: Record<string, unknown>,
  reader: string,
  fineTuning: readonly Deployment[],
): Promise<JobCreator> {
  if (namesCreator(job)) {
    const creator = creatorOf(job, reader);
    return { settlement: settlementId(creator, String(job.id)), creator, alsoSettledAs: [] };
  }
  const upstreamId = String(job.id);
  const names = [...new Set([reader, ...fineTuning.map((d) => d.name)])];
  const records = await Promise.all(
    names.map((name) =>
      stores.ownership.get(owner.tenant, 'fine_tuning_job', settlementId(name, upstreamId)),
    ),
  );
  const creator = records.find((r) => r !== undefined && r.keyId === owner.keyId)?.deployment;
  const settlement = settlementId(creator ?? LEGACY, upstreamId);
  return { settlement, creator, alsoSettledAs: formerSettlements(upstreamId, names, settlement) };
}
