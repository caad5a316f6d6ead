/**
 * Charges per unit where tokens do not measure the work: searches (rerank) so far. Same
 * micro-dollar rounding as token costs, so the header, the budget and analytics agree.
 */
import type { ModelRoute, Pricing } from '../config/snapshot.ts';

export interface Units {
  searches?: number | undefined;
}

export function unitCostUsd(pricing: Pricing | undefined, units: Units): number {
  const micros = (pricing?.perSearch ?? 0) * (units.searches ?? 0) * 1_000_000;
  if (micros <= 0) return 0;
  return Math.max(1, Math.round(micros)) / 1_000_000;
}

/** The most a request of these units can cost on any deployment of these models (for the hold). */
export function dearestUnitCostUsd(routes: readonly ModelRoute[], units: Units): number {
  let worst = 0;
  for (const d of routes.flatMap((r) => r.deployments))
    worst = Math.max(worst, unitCostUsd(d.pricing, units));
  return worst;
}
