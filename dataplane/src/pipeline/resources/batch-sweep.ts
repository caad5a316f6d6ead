/**
 * The batch settlement sweep: a batch that finishes upstream is charged even when nobody reads
 * it through Gantry again. Each tick reads the queued batches from their deployments, adopts
 * their output files, and settles a finished one as a read does (`chargeThenClaim`: the charge
 * first, idempotent by the batch, then the once-only claim), so a sweep on one pod and a client
 * read on another charge it once, and a charge the store refuses is retried by the next tick or
 * read, not remembered in this process. See resources/sweep.ts for what every sweep shares.
 */
import { readJsonObject } from '../../router/calls.ts';
import { UpstreamFailure } from '../../router/upstream.ts';
import type { OwnedRecord } from '../../stores/ownership/types.ts';
import { batchCostUsd, finishedBatchUsage, isFinishedBatch } from './batch.ts';
import { adoptOutputFiles } from './batches.ts';
import { chargeThenClaim, heldBatch, pastHold } from './held-work.ts';
import { FAMILY } from './families.ts';
import { foundUpstream, missingUpstream } from './not-found.ts';
import { objectPath } from './owned.ts';
import { sendResource } from './proxy.ts';
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
} from './sweep.ts';

export type { SweepDeps, SweepReport } from './sweep.ts';
export { DEFAULT_SWEEP_LIMIT } from './sweep.ts';

/** Default pause between sweeps (batches and fine-tuning jobs); `GANTRY_BATCH_SWEEP_MS` (0 turns them off). */
export const DEFAULT_BATCH_SWEEP_MS = 60_000;

export type BatchSweeper = Sweeper;

export function batchSweeper(deps: SweepDeps, limit = DEFAULT_SWEEP_LIMIT): BatchSweeper {
  return sweeper(deps, 'batch', limit, (record) => sweepBatch(deps, record));
}

async function sweepBatch(deps: SweepDeps, record: OwnedRecord): Promise<Outcome> {
  const snapshot = deps.snapshot();
  const holder = holderOf(snapshot, record);
  // A deployment taken out of the config may come back; its batches wait in the queue.
  if (!holder) return { kind: 'failed' };
  const now = deps.now?.() ?? Date.now();
  const call = sweepCall(deps, holder, now);
  let object: Record<string, unknown>;
  try {
    const res = await sendResource(
      call,
      'GET',
      objectPath(FAMILY.batch, record.id),
      { kind: 'none' },
      FAMILY.batch.upstreamHeaders,
    );
    object = await readJsonObject(call, res);
  } catch (err) {
    // Not found now is not gone for good (a transient 404, a re-pointed deployment): it is
    // marked, and only 404s spread over a day (gone.ts) release its hold, at $0, and drop it;
    // until then a later tick or read that finds it settles it. Once its hold has lapsed anyway,
    // the sweep stops asking.
    if (!(err instanceof UpstreamFailure && err.upstream.status === 404)) throw err;
    const release = { work: heldBatch(record), budget: budgetOf(snapshot, record) };
    const gone = await missingUpstream(deps.stores, record, now, release).catch(settlementFailed(deps));
    if (gone)
      deps.log.info({ batch: record.id, tenant: record.tenant }, 'batch gone upstream; its hold released');
    return { kind: gone || pastHold('batch', record.createdAt, now) ? 'gone' : 'running' };
  }
  await foundUpstream(deps.stores, record).catch((err: unknown) => {
    deps.log.warn({ batch: record.id, err: String(err) }, 'batch found upstream; its 404 marks kept');
  });
  await adoptOutputFiles(deps, record, object);
  if (!isFinishedBatch(object)) return { kind: 'running' };
  const usage = finishedBatchUsage(object, holder);
  const costUsd = usage ? batchCostUsd(holder.pricing, usage) : 0;
  // Settled even without usage: its hold is released then (a charge of nothing). A store that
  // fails leaves the batch unclaimed and queued, for the next tick or a read.
  const settled = await chargeThenClaim(
    deps.stores,
    budgetOf(snapshot, record),
    heldBatch(record),
    costUsd,
  ).catch(settlementFailed(deps));
  if (!settled || !usage) return { kind: 'finished' };
  await recordSpend(deps, record, holder, { endpoint: 'batches', costUsd, ...usage }, now);
  deps.log.info(
    { batch: record.id, tenant: record.tenant, costUsd, ...usage },
    'batch finished; charged by the sweep',
  );
  return { kind: 'finished', costUsd };
}
