/** Image generation, edits and variations: checked fields, per-image price, JSON answer passed through. */
import { invalidParam } from '../../errors.ts';
import { UpstreamFailure } from '../../router/upstream.ts';
import type { MediaBody, MediaOperation } from '../../providers/types.ts';
import type { RequestContext } from '../context.ts';
import type { PipelineDeps } from '../forward.ts';
import type { Served } from '../chat.ts';
import { imageUnits } from './pricing.ts';
import { admitMedia, executeMedia, readJsonObject, sendMedia, settleMedia, unitsCharge } from './run.ts';

/** OpenAI's ceiling on images per request. */
export const MAX_IMAGES = 10;

export interface ImageParams {
  model: string;
  n: number;
  size: string | undefined;
  quality: string | undefined;
}

const RESPONSE_FORMATS = new Set(['url', 'b64_json']);

/**
 * Pixels a side of an image may have. OpenAI's models take fixed sizes between 256 and 1792
 * (dall-e-2 256–1024 squares, dall-e-3 1024×1024/1792×1024/1024×1792, gpt-image 1024×1024/
 * 1536×1024/1024×1536); other providers behind the same API render up to 4K (Gemini's
 * 4096×2304). Past these no provider renders, yet a size is what an image is priced by: a
 * 99999×99999 request, left before the provider's 400, was charged ~9,500 images' worth.
 */
export const MIN_IMAGE_SIDE = 64;
export const MAX_IMAGE_SIDE = 4096;

/** `auto` or `<width>x<height>` with each side within the bounds; else a 400 naming `size`. */
export function checkImageSize(size: string): void {
  if (size === 'auto') return;
  const m = /^(\d{1,5})x(\d{1,5})$/.exec(size);
  const sides = m ? [Number(m[1]), Number(m[2])] : [];
  if (sides.length === 2 && sides.every((n) => n >= MIN_IMAGE_SIDE && n <= MAX_IMAGE_SIDE)) return;
  throw invalidParam(
    'size',
    `must be auto or <width>x<height> with each side from ${MIN_IMAGE_SIDE} to ${MAX_IMAGE_SIDE} pixels ` +
      `(OpenAI's models take 256x256, 512x512, 1024x1024, 1536x1024, 1024x1536, 1792x1024 or 1024x1792)`,
  );
}

/**
 * The fields that decide routing and price, from a JSON body or multipart fields (where
 * every value is text). `prompt` is required except for variations.
 */
export function imageParams(fields: Readonly<Record<string, unknown>>, op: MediaOperation): ImageParams {
  const model = fields.model;
  if (typeof model !== 'string' || model === '') throw invalidParam('model', 'is required');
  if (op !== 'images/variations') {
    const prompt = fields.prompt;
    if (typeof prompt !== 'string' || prompt.trim() === '') throw invalidParam('prompt', 'is required');
  }
  const rawN = fields.n ?? 1;
  const n = typeof rawN === 'string' && /^\d+$/.test(rawN) ? Number(rawN) : rawN;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > MAX_IMAGES)
    throw invalidParam('n', `must be an integer from 1 to ${MAX_IMAGES}`);
  for (const name of ['size', 'quality', 'style'] as const) {
    const v = fields[name];
    if (v !== undefined && typeof v !== 'string') throw invalidParam(name, 'must be a string');
  }
  const size = fields.size as string | undefined;
  if (size !== undefined) checkImageSize(size);
  const format = fields.response_format;
  if (format !== undefined && (typeof format !== 'string' || !RESPONSE_FORMATS.has(format)))
    throw invalidParam('response_format', 'must be url or b64_json');
  return { model, n, size, quality: fields.quality as string | undefined };
}

const reported = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

export async function runImages(
  deps: PipelineDeps,
  ctx: RequestContext,
  op: MediaOperation,
  params: ImageParams,
  body: MediaBody,
): Promise<Served & { response: Record<string, unknown>; costUsd: number }> {
  const estimatePerImage = imageUnits(params.size, params.quality);
  const routing = await admitMedia(deps, ctx, {
    endpoint: 'images',
    path: `/v1/${op}`,
    model: params.model,
    capability: 'images',
    unit: 'perImage',
    estimateUnits: params.n * estimatePerImage,
  });
  const routed = await executeMedia(
    deps,
    ctx,
    routing,
    async (call) => {
      const answer = await readJsonObject(call, await sendMedia(call, op, body, false));
      if (!Array.isArray(answer.data))
        throw new UpstreamFailure({
          kind: 'server',
          status: 200,
          message: `upstream answered ${op} without a data array`,
        });
      return { answer, data: answer.data as unknown[] };
    },
    // Left once sent: every image asked for, at the size asked (the provider renders them unread).
    unitsCharge('perImage', params.n * imageUnits(params.size, params.quality, 1)),
  );
  const { answer, data } = routed.value;
  // Charged for what came back at the size and quality it came in, never more than was asked for.
  const delivered = Math.min(data.length, params.n);
  const perImage = Math.min(
    estimatePerImage,
    imageUnits(reported(answer.size) ?? params.size, reported(answer.quality) ?? params.quality, 1),
  );
  const cost = await settleMedia(deps, ctx, routed, 'perImage', delivered * perImage);
  return { response: answer, costUsd: cost, deployment: routed.deployment, log: routed.log };
}
