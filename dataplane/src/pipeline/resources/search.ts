/**
 * POST /v1/vector_stores/{id}/search: one search on the deployment holding the store, priced
 * like rerank at `pricing.perSearch` (held before the call, settled after, in X-Gantry-Cost).
 */
import { unitCostUsd } from '../../accounting/unit-cost.ts';
import { invalidParam } from '../../errors.ts';
import type { RequestContext } from '../context.ts';
import type { PipelineDeps } from '../forward.ts';
import { settleAnswered } from '../settlement.ts';
import { FAMILY } from './families.ts';
import { beginOnOwned, jsonOnHolder, objectPath, type Json } from './owned.ts';
import type { Answer } from './operations.ts';

const spec = FAMILY.vector_store;

export function checkSearchBody(body: Json): void {
  const q = body.query;
  const ok =
    (typeof q === 'string' && q.trim() !== '') ||
    (Array.isArray(q) && q.length > 0 && q.every((x) => typeof x === 'string' && x.trim() !== ''));
  if (!ok) throw invalidParam('query', 'must be a non-empty string or array of strings');
  const n = body.max_num_results;
  if (n !== undefined && (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 50))
    throw invalidParam('max_num_results', 'must be an integer from 1 to 50');
}

export async function searchVectorStore(
  deps: PipelineDeps,
  ctx: RequestContext,
  id: string,
  body: Json,
): Promise<Answer> {
  checkSearchBody(body);
  const record = await beginOnOwned(deps, ctx, 'vector_store', id, (_, holder) =>
    unitCostUsd(holder.pricing, { searches: 1 }),
  );
  const { object, served } = await jsonOnHolder(
    deps,
    ctx,
    spec,
    record,
    'POST',
    objectPath(spec, id, '/search'),
    {
      kind: 'json',
      json: body,
    },
  );
  const costUsd = unitCostUsd(served.deployment.pricing, { searches: 1 });
  await settleAnswered(deps, ctx, served, costUsd);
  return { object, served, costUsd };
}
