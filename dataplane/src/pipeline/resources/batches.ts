/**
 * Batches: created on the deployment that holds their input file (which must be the caller's
 * and uploaded for `batch`), read back from it, and charged once, when Gantry first sees the
 * batch finished with its usage: at the holding deployment's token prices (see
 * docs/decisions.md on batch discounts). The batch's output and error files become the
 * caller's files as soon as a read shows them.
 */
import { MAX_ESTIMATE_USD } from '../../accounting/estimate.ts';
import { GatewayError, invalidParam } from '../../errors.ts';
import { formatUsd, fromMicros, toMicros } from '../../stores/money.ts';
import { ownedBy, type OwnedRecord } from '../../stores/ownership/types.ts';
import type { RequestContext } from '../context.ts';
import type { PipelineDeps } from '../forward.ts';
import {
  BATCH_ENDPOINTS,
  batchCostUsd,
  clampEstimateUsd,
  finishedBatchUsage,
  isFinishedBatch,
} from './batch.ts';
import { holderOf, ownerOf, type Json } from './owned.ts';
import { FAMILY } from './families.ts';
import { createResource, type Charge, type Observer } from './operations.ts';
import { checkObjectId } from './references.ts';

export const COMPLETION_WINDOWS = ['24h'];

export function checkBatchBody(body: Json): void {
  if (typeof body.input_file_id !== 'string' || body.input_file_id === '')
    throw invalidParam('input_file_id', 'is required');
  checkObjectId('input_file_id', body.input_file_id);
  if (typeof body.endpoint !== 'string' || !(BATCH_ENDPOINTS as readonly string[]).includes(body.endpoint))
    throw invalidParam('endpoint', `must be one of ${BATCH_ENDPOINTS.join(', ')}`);
  if (body.completion_window !== undefined && !COMPLETION_WINDOWS.includes(String(body.completion_window)))
    throw invalidParam('completion_window', `must be ${COMPLETION_WINDOWS.join(' or ')}`);
}

/** What a key's batches not yet settled may still cost: counted against its budget until they settle. */
export interface Outstanding {
  count: number;
  usd: number;
}

/** Pure: the estimates of `batches` whose settlement is not claimed (`settled[i]` for `batches[i]`). */
export function outstandingOf(batches: readonly OwnedRecord[], settled: readonly boolean[]): Outstanding {
  let count = 0;
  let usd = 0;
  batches.forEach((b, i) => {
    if (settled[i] || typeof b.estimateUsd !== 'number' || b.estimateUsd <= 0) return;
    count++;
    usd += b.estimateUsd;
  });
  return { count, usd: Math.min(usd, MAX_ESTIMATE_USD) };
}

/** A batch's hold, in the whole micro-dollars its refusal states. */
export interface BatchHold {
  /** This batch's worst case, rounded up. */
  batchMicros: number;
  /** The key's unsettled batches' worst cases, rounded up. */
  outstandingMicros: number;
  /** Their sum: what is held, so the two parts a 402 names add up to the amount it states. */
  holdUsd: number;
}

/** Pure: each part rounded up on its own, then added (the float sum rounded once could be 1 µ$ less). */
export function batchHold(estimateUsd: number, outstanding: Outstanding): BatchHold {
  const batchMicros = toMicros(estimateUsd, 'up');
  const outstandingMicros = toMicros(outstanding.usd, 'up');
  return { batchMicros, outstandingMicros, holdUsd: fromMicros(batchMicros + outstandingMicros) };
}

/** Pure: the budget's 402 for a batch, naming what of the hold the unsettled batches take. */
export function batchRefusal(err: GatewayError, hold: BatchHold, count: number): GatewayError {
  return new GatewayError(
    'budget_exceeded',
    `${err.message}: this batch's worst case of ${formatUsd(fromMicros(hold.batchMicros))} plus ` +
      `${formatUsd(fromMicros(hold.outstandingMicros))} still held for this key's ${count} unsettled ` +
      `batch${count === 1 ? '' : 'es'}, which count until they finish and are charged`,
    { headers: err.headers },
  );
}

async function outstandingBatches(deps: PipelineDeps, ctx: RequestContext): Promise<Outstanding> {
  const owner = ownerOf(ctx);
  const batches = (await deps.stores.ownership.list(owner, 'batch')).filter((b) => b.estimateUsd);
  const settled = await deps.stores.ownership.claimed(owner.tenant, 'batch', batches, 'settled');
  return outstandingOf(batches, settled);
}

/**
 * A file's stored worst case. A record written before estimates were clamped may hold null
 * (JSON's Infinity): that is the ceiling, never "nothing".
 */
function fileEstimateUsd(file: OwnedRecord | undefined): number | undefined {
  const raw = file?.estimateUsd as number | null | undefined;
  if (raw === undefined) return undefined;
  return raw === null ? MAX_ESTIMATE_USD : clampEstimateUsd(raw);
}

export async function createBatch(deps: PipelineDeps, ctx: RequestContext, body: Json) {
  checkBatchBody(body);
  // A batch runs for hours and is charged when it finishes, so its worst case (the file's
  // estimate) stays counted against the budget until then: kept on its record, and added up
  // over the key's unsettled batches. A new batch must fit beside them (402 otherwise),
  // checked by holding both while the batch is created.
  const file = ownedBy(
    await deps.stores.ownership.get(ctx.tenant.name, 'file', String(body.input_file_id)),
    ownerOf(ctx),
  );
  const estimateUsd = ctx.key.spec.budget ? fileEstimateUsd(file) : undefined;
  const outstanding = estimateUsd === undefined ? { count: 0, usd: 0 } : await outstandingBatches(deps, ctx);
  const hold = estimateUsd === undefined ? undefined : batchHold(estimateUsd, outstanding);
  try {
    return await createResource(deps, ctx, 'batch', { completion_window: '24h', ...body }, undefined, {
      refs: 'batch',
      holdUsd: hold?.holdUsd,
      estimateUsd,
      check: ([input]) => {
        if (input && input.purpose !== 'batch')
          throw invalidParam(
            'input_file_id',
            `file ${input.id} was uploaded for purpose ${input.purpose ?? 'unknown'}; a batch needs a file uploaded with purpose batch`,
          );
      },
    });
  } catch (err) {
    if (!(err instanceof GatewayError && err.type === 'budget_exceeded') || !hold || outstanding.count === 0)
      throw err;
    throw batchRefusal(err, hold, outstanding.count);
  }
}

/** Output and error files of a batch belong to the batch's owner, on the batch's deployment. */
export async function adoptOutputFiles(
  deps: Pick<PipelineDeps, 'stores'>,
  batch: OwnedRecord,
  object: Json,
): Promise<void> {
  for (const field of ['output_file_id', 'error_file_id']) {
    const id = object[field];
    if (typeof id !== 'string' || id === '') continue;
    if (await deps.stores.ownership.get(batch.tenant, 'file', id)) continue;
    await deps.stores.ownership.put({
      family: 'file',
      id,
      tenant: batch.tenant,
      keyId: batch.keyId,
      deployment: batch.deployment,
      model: batch.model,
      createdAt: Date.now(),
      purpose: 'batch_output',
    });
  }
}

/**
 * Observes a batch as read upstream: adopts its files; settles it the first time it is seen
 * finished, charging its usage (if it reports any). The settlement claim is taken even
 * without usage: it ends the batch's estimate counting against the budget. Reads hold no
 * budget, so the charge goes to the budget directly (past the limit it is recorded, not
 * refused: the work was done), under the id the sweep charges it with, so a read and a sweep
 * racing charge it once; before the claim, so a budget store that cannot take it fails the
 * read and leaves the batch to the next read or sweep rather than losing the charge.
 */
export function batchObserver(deps: PipelineDeps, ctx: RequestContext): Observer {
  return async (record, object): Promise<Charge> => {
    await adoptOutputFiles(deps, record, object);
    if (!isFinishedBatch(object)) return { costUsd: 0 };
    const holder = holderOf(ctx, FAMILY.batch, record);
    const usage = finishedBatchUsage(object, holder);
    const owned = deps.stores.ownership;
    const [done] = await owned.claimed(record.tenant, 'batch', [record], 'settled');
    if (done) return { costUsd: 0, finished: true };
    const costUsd = usage ? batchCostUsd(holder.pricing, usage) : 0;
    const budget = ctx.key.spec.budget;
    if (budget && costUsd > 0)
      await deps.stores.budgets.charge({
        tenant: record.tenant,
        keyId: record.keyId,
        budget,
        amountUsd: costUsd,
        id: batchChargeId(record),
      });
    // Once per batch, whichever pod or request sees it first.
    if (!(await owned.claim(record.tenant, 'batch', record, 'settled')))
      return { costUsd: 0, finished: true };
    if (!usage) return { costUsd: 0, finished: true };
    ctx.log.info({ batch: record.id, costUsd, ...usage }, 'batch finished; charged');
    return { costUsd, usage, deployment: holder, finished: true };
  };
}

/** The id a finished batch's charge is made under, by a read or the sweep: charged once. */
export const batchChargeId = (record: OwnedRecord): string => `batch:${record.tenant}:${record.id}`;
