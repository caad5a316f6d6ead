/**
 * `POST /v1/ocr`: proxied through the router to deployments with the `ocr` capability
 * (Mistral's wire format, so OpenAI-wire providers such as `openai-compatible`), charged per
 * page read (`pricing.perPage`); the budget holds the most pages the request can read.
 */
import type { Deployment } from '../../config/snapshot.ts';
import { invalidParam } from '../../errors.ts';
import type { AttemptLog } from '../../router/router.ts';
import type { RequestContext } from '../context.ts';
import type { PipelineDeps } from '../forward.ts';
import { admitMedia, executeMedia, settleMedia, unitsCharge } from '../media/run.ts';
import { passthroughCall } from '../passthrough/call.ts';
import { billedPages, checkDocument, LEAST_OCR_PAGES } from './document.ts';

export interface OcrOutcome {
  response: Record<string, unknown>;
  costUsd: number;
  deployment: Deployment;
  log: AttemptLog;
}

export async function runOcr(
  deps: PipelineDeps,
  ctx: RequestContext,
  body: Record<string, unknown>,
  maxDocumentBytes: number,
): Promise<OcrOutcome> {
  const model = body.model;
  if (typeof model !== 'string' || model === '') throw invalidParam('model', 'is required');
  const doc = checkDocument(body.document, body.pages, maxDocumentBytes);
  const routing = await admitMedia(deps, ctx, {
    endpoint: 'ocr',
    path: '/v1/ocr',
    model,
    capability: 'ocr',
    unit: 'perPage',
    estimateUnits: doc.maxPages,
  });
  const routed = await executeMedia(
    deps,
    ctx,
    routing,
    (call) => passthroughCall(call, 'POST', 'ocr', body),
    // Left once sent: the least the provider reads, one page (an image is one; a document has
    // at least one, and the gateway's PDF count is an upper bound, never a lower one).
    unitsCharge('perPage', LEAST_OCR_PAGES),
  );
  const pages = billedPages(routed.value);
  const cost = await settleMedia(deps, ctx, routed, 'perPage', pages);
  return {
    response: { ...routed.value, model },
    costUsd: cost,
    deployment: routed.deployment,
    log: routed.log,
  };
}
