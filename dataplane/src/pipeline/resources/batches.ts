/**
 * Batches: created on the deployment that holds their input file (which must be the caller's
 * and uploaded for `batch`), read back from it, and charged once, when Gantry first sees the
 * batch finished with its usage: at the holding deployment's token prices (see
 * docs/decisions.md on batch discounts). The batch's output and error files become the
 * caller's files as soon as a read shows them.
 */
import { invalidParam } from '../../errors.ts';
import { ownedBy, type OwnedRecord } from '../../stores/ownership/types.ts';
import type { RequestContext } from '../context.ts';
import type { PipelineDeps } from '../forward.ts';
import { BATCH_ENDPOINTS, batchCostUsd, finishedBatchUsage, isFinishedBatch } from './batch.ts';
import { holderOf, ownerOf, type Json } from './owned.ts';
import { FAMILY } from './families.ts';
import { createResource, type Charge, type Observer } from './operations.ts';

export const COMPLETION_WINDOWS = ['24h'];

export function checkBatchBody(body: Json): void {
  if (typeof body.input_file_id !== 'string' || body.input_file_id === '')
    throw invalidParam('input_file_id', 'is required');
  if (typeof body.endpoint !== 'string' || !(BATCH_ENDPOINTS as readonly string[]).includes(body.endpoint))
    throw invalidParam('endpoint', `must be one of ${BATCH_ENDPOINTS.join(', ')}`);
  if (body.completion_window !== undefined && !COMPLETION_WINDOWS.includes(String(body.completion_window)))
    throw invalidParam('completion_window', `must be ${COMPLETION_WINDOWS.join(' or ')}`);
}

export async function createBatch(deps: PipelineDeps, ctx: RequestContext, body: Json) {
  checkBatchBody(body);
  // The file's worst case is held while the batch is created: a budget that cannot cover the
  // batch refuses it up front (402) instead of being overrun when it finishes.
  const file = ownedBy(
    await deps.stores.ownership.get(ctx.tenant.name, 'file', String(body.input_file_id)),
    ownerOf(ctx),
  );
  return createResource(deps, ctx, 'batch', { completion_window: '24h', ...body }, undefined, {
    refs: 'batch',
    holdUsd: file?.estimateUsd,
    check: ([input]) => {
      if (input && input.purpose !== 'batch')
        throw invalidParam(
          'input_file_id',
          `file ${input.id} was uploaded for purpose ${input.purpose ?? 'unknown'}; a batch needs a file uploaded with purpose batch`,
        );
    },
  });
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

/** Observes a batch as read upstream: adopts its files; charges its usage the first time it is seen finished. */
export function batchObserver(deps: PipelineDeps, ctx: RequestContext): Observer {
  return async (record, object): Promise<Charge> => {
    await adoptOutputFiles(deps, record, object);
    // Seen finished: the settlement sweep need not look at it again.
    if (isFinishedBatch(object)) await deps.stores.ownership.swept(record, true);
    const usage = finishedBatchUsage(object);
    if (!usage) return { costUsd: 0 };
    // Once per batch, whichever pod or request sees it first.
    if (!(await deps.stores.ownership.claim(record.tenant, 'batch', record.id, 'settled')))
      return { costUsd: 0 };
    const holder = holderOf(ctx, FAMILY.batch, record);
    const costUsd = batchCostUsd(holder.pricing, usage);
    ctx.log.info({ batch: record.id, costUsd, ...usage }, 'batch finished; charged');
    return { costUsd, usage, deployment: holder };
  };
}
