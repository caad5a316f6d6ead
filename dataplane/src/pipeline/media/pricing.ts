/**
 * Per-unit prices of the media endpoints, where tokens do not apply: images, seconds of
 * audio or video, characters of speech. Pure; the estimate and the settlement use the same
 * functions, so a request is never charged more than it was admitted for on the same units.
 */
import type { ModelRoute, Pricing } from '../../config/snapshot.ts';
import { chargedMicros, microsToUsd } from '../../accounting/micros.ts';

export type Unit = 'perImage' | 'perSecond' | 'perCharacter' | 'perPage' | 'perRequest';

/** Pixels of the image `perImage` prices: one standard 1024×1024 image. */
const BASE_PIXELS = 1024 * 1024;

/** Qualities billed as two images (OpenAI's `hd`, gpt-image's `high`). */
const DOUBLE_QUALITY = new Set(['hd', 'high']);

/**
 * Billed units of one image: one per started 1024×1024 block of pixels, doubled for high
 * quality. A size not given (or `auto`) counts as `unknownBlocks`: the estimate assumes the
 * largest common size (1792×1024, 2 blocks) so it is never short; the settlement uses the
 * size the upstream reports, else the APIs' default 1024×1024.
 */
export function imageUnits(size: string | undefined, quality: string | undefined, unknownBlocks = 2): number {
  const m = size ? /^(\d{1,5})x(\d{1,5})$/.exec(size) : null;
  const blocks = m ? Math.max(1, Math.ceil((Number(m[1]) * Number(m[2])) / BASE_PIXELS)) : unknownBlocks;
  return blocks * (quality && DOUBLE_QUALITY.has(quality) ? 2 : 1);
}

/** Whole micro-dollars rounded up, as token prices are: the header, the budget and analytics agree. */
export function unitCostUsd(pricing: Pricing | undefined, unit: Unit, units: number): number {
  const price = pricing?.[unit];
  if (price === undefined || units <= 0) return 0;
  // One product of the units, so more units never round to less (the estimate's bound rests on it).
  return microsToUsd(chargedMicros(price * 1_000_000 * units));
}

/** The dearest unit price among every deployment the request may land on. */
export function dearestUnitPrice(routes: readonly ModelRoute[], unit: Unit): Pricing | undefined {
  let worst: Pricing | undefined;
  for (const d of routes.flatMap((r) => r.deployments)) {
    const price = d.pricing?.[unit];
    if (price !== undefined && (worst?.[unit] === undefined || price > worst[unit]!)) worst = d.pricing;
  }
  return worst;
}

export function estimateUnitCost(routes: readonly ModelRoute[], unit: Unit, units: number): number {
  return unitCostUsd(dearestUnitPrice(routes, unit), unit, units);
}
