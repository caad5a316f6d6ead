/**
 * The fine-tuning job sweep: a budgeted job holds its worst case (50 epochs when the provider
 * chooses) until it settles, and nobody may read it again, or a list may not reach it (100
 * newest per deployment). Each tick reads the queued jobs (the ownership records a budgeted
 * create writes, one per job that holds money) from their deployments and settles a finished
 * one as a read does: a succeeded job's training charged in place of its hold, a failed or
 * cancelled one's hold released, once whoever sees it first (`chargeThenClaim`). It runs on the
 * batch sweep's timer, with the same queue rules (resources/sweep.ts).
 */
import { passthroughCall } from '../passthrough/call.ts';
import { UpstreamFailure } from '../../router/upstream.ts';
import type { CallContext } from '../../router/calls.ts';
import type { OwnedRecord } from '../../stores/ownership/types.ts';
import { chargeThenClaim, pastHold } from '../resources/held-work.ts';
import { releasedJob, upstreamIdOf } from './held-record.ts';
import { foundUpstream, missingUpstream } from '../resources/not-found.ts';
import {
  budgetOf,
  DEFAULT_SWEEP_LIMIT,
  holderOf,
  recordSpend,
  settlementFailed,
  sweepCall,
  sweeper,
  type Outcome,
  type Sweeper,
  type SweepDeps,
} from '../resources/sweep.ts';
import type { Deployment, Snapshot } from '../../config/snapshot.ts';
import { formerSettlements, legacyId, namesCreator } from './creator.ts';
import { mayUse } from '../context.ts';
import { heldJob, isFinishedJob, jobModelOf, ownedBy, pricedTraining, trainingCharge } from './jobs.ts';

const allDeployments = (snapshot: Snapshot): Deployment[] =>
  [...snapshot.models.values()].flatMap((r) => r.deployments);

/** Every fine-tuning deployment's name in the config. */
const fineTuningNames = (snapshot: Snapshot): string[] =>
  allDeployments(snapshot)
    .filter((d) => d.capabilities.has('fine_tuning'))
    .map((d) => d.name);

/**
 * The fine-tuning deployments the record's key may read its job through, as a read's caller
 * could: the prices a job is charged at when its creator has none (`pricedTraining`).
 */
function readableBy(snapshot: Snapshot, record: OwnedRecord): Deployment[] {
  const key = [...snapshot.keys.values()].find((k) => k.id === record.keyId && k.tenant === record.tenant);
  const tenant = snapshot.tenants.get(record.tenant);
  const may = (model: string): boolean =>
    key !== undefined && tenant !== undefined && mayUse({ key, tenant, snapshot }, model);
  return [...snapshot.models.values()]
    .filter((r) => may(r.model))
    .flatMap((r) => r.deployments)
    .filter((d) => d.capabilities.has('fine_tuning'));
}

export function jobSweeper(deps: SweepDeps, limit = DEFAULT_SWEEP_LIMIT): Sweeper {
  return sweeper(deps, 'fine_tuning_job', limit, (record) => sweepJob(deps, record));
}

/**
 * The deployments a record's job is read through: its creator, or when the creator left the
 * config, the fine-tuning deployments of its model the key may use (deployments sharing the
 * creator's provider account see the job too; a read prices it the same way).
 */
function readersOf(snapshot: Snapshot, record: OwnedRecord): Deployment[] {
  const holder = holderOf(snapshot, record);
  if (holder) return [holder];
  return readableBy(snapshot, record).filter((d) => d.model === record.model);
}

/**
 * The job as the first of `readers` that has it answers; undefined when none has it. A 404, or
 * any 4xx from a deployment other than the record's (one sharing the gone creator's account, or
 * not: a 403 or 400 there says only that the job is not readable through it), is "not here":
 * the next reader is asked. Other errors end the walk. One timeout covers them all, so a record
 * costs the tick one read's time at most.
 */
async function readJob(
  deps: SweepDeps,
  readers: readonly Deployment[],
  record: OwnedRecord,
  upstreamId: string,
  now: number,
): Promise<{ job: Record<string, unknown>; reader: Deployment } | undefined> {
  const path = `fine_tuning/jobs/${encodeURIComponent(upstreamId)}`;
  let bounds: Pick<CallContext, 'signal' | 'deadline'> | undefined;
  for (const reader of readers) {
    const call = { ...sweepCall(deps, reader, now), ...bounds };
    bounds = { signal: call.signal, deadline: call.deadline };
    try {
      const job = await passthroughCall(call, 'GET', path, undefined, false);
      // Another account's deployment could answer for an id it reuses: only the key's job counts.
      if (reader.name === record.deployment || ownedBy(job, record)) return { job, reader };
    } catch (err) {
      const status = err instanceof UpstreamFailure ? err.upstream.status : undefined;
      const notHere =
        status === 404 ||
        (reader.name !== record.deployment && status !== undefined && status >= 400 && status < 500);
      if (!notHere) throw err;
    }
  }
  return undefined;
}

async function sweepJob(deps: SweepDeps, record: OwnedRecord): Promise<Outcome> {
  const snapshot = deps.snapshot();
  const now = deps.now?.() ?? Date.now();
  const expired = pastHold('fine_tuning_job', record.createdAt, now);
  const upstreamId = upstreamIdOf(record);
  const readers = readersOf(snapshot, record);
  // A creator taken out of the config with nothing else to read its job through may come back;
  // its job waits in the queue until its hold has lapsed.
  if (readers.length === 0 || upstreamId === undefined) return { kind: expired ? 'gone' : 'failed' };
  const budget = budgetOf(snapshot, record);
  // A read that fails (a 5xx, a timeout) keeps the record queued while its hold stands; after
  // that, as with nothing to read it through, the sweep stops asking.
  const found = await readJob(deps, readers, record, upstreamId, now).catch((err: unknown) => {
    if (expired) return 'gone' as const;
    throw err;
  });
  if (found === 'gone') return { kind: 'gone' };
  // Not found now (a transient 404, a deployment re-pointed to another account) is not gone:
  // it stays queued and held. Only its creator's 404s count towards gone for good (gone.ts),
  // which releases its hold at $0; others' say only that they cannot read it. Its hold lapses
  // at its TTL anyway, after which the sweep stops asking.
  if (!found) {
    const gone =
      readers[0]?.name === record.deployment &&
      (await missingUpstream(deps.stores, record, now, {
        work: releasedJob(record, upstreamId),
        budget,
      }).catch(settlementFailed(deps)));
    if (gone)
      deps.log.info(
        { job: record.id, tenant: record.tenant },
        'fine-tuning job gone upstream; its hold released',
      );
    return { kind: gone || expired ? 'gone' : 'running' };
  }
  await foundUpstream(deps.stores, record).catch((err: unknown) => {
    deps.log.warn({ job: record.id, err: String(err) }, 'fine-tuning job found upstream; its 404 marks kept');
  });
  const { job, reader } = found;
  if (!isFinishedJob(job)) return { kind: 'running' };
  const price = pricedTraining(
    allDeployments(snapshot),
    record.deployment,
    readableBy(snapshot, record),
    jobModelOf(job) ?? record.model,
  );
  const due = trainingCharge(job, price);
  const costUsd = due?.costUsd ?? 0;
  // The claim names the upstream's creation time, as every read's does. A job naming no
  // creator may have been settled under a reader's name before its record's was used.
  const alsoSettledAs = namesCreator(job)
    ? []
    : formerSettlements(upstreamId, record.keyId, fineTuningNames(snapshot), record.id);
  const marksSettled = namesCreator(job) ? [] : [legacyId(record.keyId, upstreamId)];
  const work = { ...heldJob(record, record.id, job), alsoSettledAs, marksSettled };
  const settled = await chargeThenClaim(deps.stores, budget, work, costUsd).catch(settlementFailed(deps));
  if (!settled || !due) return { kind: 'finished' };
  const spent = { endpoint: 'fine_tuning' as const, costUsd, prompt_tokens: 0, completion_tokens: 0 };
  await recordSpend(deps, record, reader, spent, now);
  deps.log.info(
    { job: record.id, tenant: record.tenant, ...due },
    'fine-tuning job finished; training charged by the sweep',
  );
  return { kind: 'finished', costUsd };
}
