/**
 * Which id a finished job's settlement is named by. Jobs created since their metadata names
 * the creator (`gantry_deployment`) are settled under it. Older jobs carry no creator: their
 * settlement was named by whichever deployment read them, so deployments sharing one provider
 * account each charged them once. For those, the job's ownership record (written at create,
 * under `<creator>/<upstream id>`, for a job that held money) names the creator; a job with no
 * record is settled under `~legacy/<key id>/<upstream id>`, one id whoever reads it, so the
 * once-only claim is a single atomic step again (a name per reader let two reads at once both
 * charge). The record is found by the upstream id among the key's records, not only under
 * configured deployments' names: the sweep settles it under its record's id even when its creator
 * left the config, and a read must name it the same, or each charges it. The key is in the
 * legacy id because the claim is per tenant, not per key: two keys of one tenant on two provider
 * accounts may each have a job with the same upstream id. `~` is outside every deployment name,
 * so it names no deployment's job. A settlement taken under any configured fine-tuning
 * deployment's name, as reads before this change took them, counts as the job's (`alsoSettledAs`).
 */
import type { Deployment } from '../../config/snapshot.ts';
import type { Stores } from '../../stores/index.ts';
import { creatorOf, OWNER_KEYS, settlementId, type Owner } from './jobs.ts';

export interface JobCreator {
  /** The id the settlement is named by: `<creator>/<upstream id>`, or `legacyId`'s. */
  settlement: string;
  /** The creating deployment, when the metadata or the ownership record says which. */
  creator: string | undefined;
  /** Other settlement ids a job without a named creator may have been settled under. */
  alsoSettledAs: string[];
  /** Its `~legacy` id when settled under its record's: a read that no longer finds the record names it so. */
  marksSettled: string[];
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
 * The settlement id of a creator-less job with no record: `~legacy/<key id>/<upstream id>`.
 * A key id is `namespace/name`, so it is URI-encoded: one `/` fewer cannot make two keys' ids meet.
 */
export const legacyId = (keyId: string, upstreamId: string): string =>
  settlementId(`${LEGACY}/${encodeURIComponent(keyId)}`, upstreamId);

/**
 * Ids a creator-less job may already be settled under other than `settlement`: each named
 * deployment's (the reader's, as reads before `~legacy` named them) and the key's `~legacy` one.
 */
export const formerSettlements = (
  upstreamId: string,
  keyId: string,
  names: readonly string[],
  settlement: string,
): string[] =>
  [legacyId(keyId, upstreamId), ...[...new Set(names)].map((n) => settlementId(n, upstreamId))].filter(
    (id) => id !== settlement,
  );

/**
 * The deployment the key's ownership record of upstream job `upstreamId` names: looked up under
 * the configured names first (one `get` each), then among the key's records (at most
 * `MAX_LISTED_PER_OWNER`), where a creator that left the config is found too.
 */
async function recordedCreator(
  stores: Pick<Stores, 'ownership'>,
  owner: Owner,
  upstreamId: string,
  names: readonly string[],
): Promise<string | undefined> {
  const records = await Promise.all(
    names.map((name) =>
      stores.ownership.get(owner.tenant, 'fine_tuning_job', settlementId(name, upstreamId)),
    ),
  );
  const configured = records.find((r) => r !== undefined && r.keyId === owner.keyId);
  if (configured) return configured.deployment;
  const all = await stores.ownership.list(owner, 'fine_tuning_job');
  return all.find((r) => r.id === settlementId(r.deployment, upstreamId))?.deployment;
}

export async function jobCreator(
  stores: Pick<Stores, 'ownership'>,
  owner: Owner,
  job: Record<string, unknown>,
  reader: string,
  fineTuning: readonly Pick<Deployment, 'name'>[],
): Promise<JobCreator> {
  if (namesCreator(job)) {
    const creator = creatorOf(job, reader);
    return {
      settlement: settlementId(creator, String(job.id)),
      creator,
      alsoSettledAs: [],
      marksSettled: [],
    };
  }
  const upstreamId = String(job.id);
  const names = [...new Set([reader, ...fineTuning.map((d) => d.name)])];
  const creator = await recordedCreator(stores, owner, upstreamId, names);
  const legacy = legacyId(owner.keyId, upstreamId);
  const settlement = creator === undefined ? legacy : settlementId(creator, upstreamId);
  return {
    settlement,
    creator,
    alsoSettledAs: formerSettlements(upstreamId, owner.keyId, names, settlement),
    marksSettled: settlement === legacy ? [] : [legacy],
  };
}
