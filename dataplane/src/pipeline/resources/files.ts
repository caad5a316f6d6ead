/**
 * The Files API: an upload goes to a deployment able to hold files and is recorded as the
 * caller's. A batch input file (`purpose: batch`) is read first: it runs one model, which the
 * key must be allowed to use, and it is placed on a deployment of that model that also runs
 * batches, with the deployment's own model name written into every line.
 */
import type { Deployment } from '../../config/snapshot.ts';
import { invalidParam } from '../../errors.ts';
import type { MediaFile } from '../../providers/types.ts';
import { settle, settleAnswered } from '../settlement.ts';
import type { RequestContext } from '../context.ts';
import type { PipelineDeps } from '../forward.ts';
import { DEFAULT_MAX_OUTPUT_TOKENS } from '../../accounting/estimate.ts';
import { countTokensAtMost, estimateTextTokens } from '../../accounting/tokens.ts';
import { batchEstimateUsd, readBatchInput, upstreamBatchInput, type BatchInput } from './batch.ts';
import { bodyReferences } from './content-references.ts';
import { FAMILY, FILE_PURPOSES } from './families.ts';
import type { Reference } from './references.ts';
import { beginOnOwned, createOwned, objectPath, onHolder, type Json, type ServedBy } from './owned.ts';

const spec = FAMILY.file;

export interface FileUpload {
  fields: Record<string, string>;
  file: MediaFile;
}

export function checkPurpose(purpose: string | undefined): string {
  if (purpose === undefined || purpose === '') throw invalidParam('purpose', 'is required');
  if (!(FILE_PURPOSES as readonly string[]).includes(purpose))
    throw invalidParam('purpose', `must be one of ${FILE_PURPOSES.join(', ')}, not ${purpose}`);
  return purpose;
}

export async function uploadFile(
  deps: PipelineDeps,
  ctx: RequestContext,
  upload: FileUpload,
  headerModel: string | undefined,
): Promise<{ object: Json; served: ServedBy }> {
  const purpose = checkPurpose(upload.fields.purpose);
  let batch: BatchInput | undefined;
  if (purpose === 'batch') batch = readBatchInput(upload.file.data.toString('utf8'));
  const body = (d: Deployment) => ({
    kind: 'multipart' as const,
    fields: upload.fields,
    files: [
      batch
        ? { ...upload.file, data: Buffer.from(upstreamBatchInput(batch, d.target.upstreamModel)) }
        : upload.file,
    ],
  });
  const created = await createOwned(deps, ctx, spec, {
    body,
    // Requests in a batch file reach the upstream verbatim: what they name must be the
    // caller's, and the file goes where those objects are.
    refs: batch ? batchReferences(batch) : [],
    model: batch?.model ?? headerModel,
    alsoNeeds: batch ? ['batches'] : [],
    purpose,
  });
  if (batch && ctx.key.spec.budget) {
    const d = created.served.deployment;
    const estimateUsd = batchEstimateUsd(
      batch,
      d.pricing,
      d.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS,
      estimateTextTokens,
    );
    await deps.stores.ownership.put({ ...created.record, estimateUsd });
  }
  // Training is charged after it ran: a job on this file holds its tokens times its epochs.
  if (purpose === 'fine-tune' && ctx.key.spec.budget) {
    // Never fewer than the file holds: the job's hold is made of them.
    const trainingTokens = await countTokensAtMost(upload.file.data.toString('utf8'));
    await deps.stores.ownership.put({ ...created.record, trainingTokens });
  }
  await settleAnswered(deps, ctx, created.served, 0);
  return created;
}

function batchReferences(batch: BatchInput): Reference[] {
  return batch.lines.flatMap((line, i) =>
    bodyReferences(line.body as Json, `file[line ${batch.lineNumbers[i]!}].body`),
  );
}

/** GET /v1/files/{id}/content: the bytes as the deployment sends them. */
export async function fileContent(deps: PipelineDeps, ctx: RequestContext, id: string) {
  const record = await beginOnOwned(deps, ctx, 'file', id, 'free');
  const { res, deployment } = await onHolder(
    deps,
    ctx,
    spec,
    record,
    'GET',
    objectPath(spec, id, '/content'),
    { kind: 'none' },
    true,
  );
  await settle(deps, ctx, { status: 200, deployment, attempts: 1, costUsd: 0 });
  return { res, served: { deployment, log: { attempts: 1, failed: [] } } };
}
