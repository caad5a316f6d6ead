/**
 * Batches: created on the deployment that holds their input file (which must be the caller's
 * and uploaded for `batch`), read back from it, and charged once, when Gantry first sees the
 * batch finished with its usage: at the holding deployment's token prices (see
 * docs/decisions.md on batch discounts). The batch's output and error files become the
 * caller's files as soon as a read shows them.
 */
import { MAX_ESTIMATE_USD } from '../../accounting/estimate.ts';
import { GatewayError, invalidParam } from '../../errors.ts';
import { formatUsd, toMicros } from '../../stores/money.ts';
import { ownedBy, type OwnedRecord } from '../../stores/ownership/types.ts';
import type { RequestContext } from '../context.ts';
import type { PipelineDeps } from '../forward.ts';
import { statesWorkHeld } from '../budget-refusal.ts';
import {
  BATCH_ENDPOINTS,
  batchCostUsd,
  clampEstimateUsd,
  finishedBatchUsage,
  isFinishedBatch,
} from './batch.ts';
import { holderOf, ownerOf, type Json } from './owned.ts';
import { FAMILY } from './families.ts';
import { chargeThenClaim, heldBatch, retainHold } from './held-work.ts';
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

/** What a key's batches (or jobs) not yet settled may still cost: held against its budget until they settle. */
export interface Outstanding {
  count: number;
  usd: number;
}

/** Pure: the estimates of `records` whose settlement is not claimed (`settled[i]` for `records[i]`). */
export function outstandingOf(records: readonly OwnedRecord[], settled: readonly boolean[]): Outstanding {
  let count = 0;
  let usd = 0;
  records.forEach((b, i) => {
    if (settled[i] || typeof b.estimateUsd !== 'number' || b.estimateUsd <= 0) return;
    count++;
    usd += b.estimateUsd;
  });
  return { count, usd: Math.min(usd, MAX_ESTIMATE_USD) };
}

/**
 * The key's unsettled batches or fine-tuning jobs, for a 402 to say what of the budget they
 * hold. Only read on a refusal: the holds themselves are in the budget store.
 */
export async function outstanding(
  deps: PipelineDeps,
  ctx: RequestContext,
  family: 'batch' | 'fine_tuning_job',
): Promise<Outstanding> {
  const owner = ownerOf(ctx);
  const records = (await deps.stores.ownership.list(owner, family)).filter((b) => b.estimateUsd);
  const settled = await deps.stores.ownership.claimed(owner.tenant, family, records, 'settled');
  return outstandingOf(records, settled);
}

/**
 * Pure: the budget's 402 for a new batch or job, adding what of the budget the key's unsettled
 * ones of its kind hold (`noun` singular, `plural` when more than one).
 */
export function heldRefusal(
  err: GatewayError,
  held: Outstanding,
  noun: string,
  plural: string,
  until: string,
  /** The refusal states what started work holds already: name the count alone. */
  amountStated = statesWorkHeld(err),
): GatewayError {
  if (held.count === 0) return err;
  const these = `${held.count} unsettled ${held.count === 1 ? noun : plural}`;
  return new GatewayError(
    'budget_exceeded',
    amountStated
      ? `${err.message}; the held part includes this key's ${these}, which count until ${until}`
      : `${err.message}; ${formatUsd(toMicros(held.usd, 'up') / 1_000_000)} of the budget is held for this key's ` +
          `${these}, which count until ${until}`,
    { headers: err.headers },
  );
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
  // estimate) is held against the key's budget while it is created, and then kept held under
  // the batch's id until it settles: every other spend of the key fits beside it or is refused.
  const file = ownedBy(
    await deps.stores.ownership.get(ctx.tenant.name, 'file', String(body.input_file_id)),
    ownerOf(ctx),
  );
  const estimateUsd = ctx.key.spec.budget ? fileEstimateUsd(file) : undefined;
  try {
    return await createResource(deps, ctx, 'batch', { completion_window: '24h', ...body }, undefined, {
      refs: 'batch',
      holdUsd: estimateUsd,
      estimateUsd,
      retain: (record) => retainHold(deps, ctx, 'batch', record.id),
      check: ([input]) => {
        if (input && input.purpose !== 'batch')
          throw invalidParam(
            'input_file_id',
            `file ${input.id} was uploaded for purpose ${input.purpose ?? 'unknown'}; a batch needs a file uploaded with purpose batch`,
          );
      },
    });
  } catch (err) {
    if (!(err instanceof GatewayError && err.type === 'budget_exceeded') || estimateUsd === undefined)
      throw err;
    const held = await outstanding(deps, ctx, 'batch').catch(() => ({ count: 0, usd: 0 }));
    throw heldRefusal(err, held, 'batch', 'batches', 'they finish and are charged');
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
 * finished, charging its usage (if it reports any) in place of its hold, then claiming it
 * (`chargeThenClaim`, the same for fine-tuning jobs): a read and a sweep racing charge it once.
 * Reads hold no budget, so past the limit the charge is recorded, not refused: the work was done.
 */
export function batchObserver(deps: PipelineDeps, ctx: RequestContext): Observer {
  return async (record, object): Promise<Charge> => {
    await adoptOutputFiles(deps, record, object);
    if (!isFinishedBatch(object)) return { costUsd: 0 };
    const holder = holderOf(ctx, FAMILY.batch, record);
    const usage = finishedBatchUsage(object, holder);
    const costUsd = usage ? batchCostUsd(holder.pricing, usage) : 0;
    // Once per batch, whichever pod or request sees it first.
    if (!(await chargeThenClaim(deps.stores, ctx.key.spec.budget, heldBatch(record), costUsd)))
      return { costUsd: 0, finished: true };
    if (!usage) return { costUsd: 0, finished: true };
    ctx.log.info({ batch: record.id, costUsd, ...usage }, 'batch finished; charged');
    return { costUsd, usage, deployment: holder, finished: true };
  };
}
