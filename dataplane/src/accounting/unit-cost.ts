/**
 * Charges per unit where tokens do not measure the work: searches (rerank) so far. Same
 * micro-dollar rounding as token costs (up), so the header, the budget and analytics agree.
 */
import type { ModelRoute, Pricing } from '../config/snapshot.ts';
import { chargedMicros, microsToUsd } from './micros.ts';

export interface Units {
  searches?: number | undefined;
}

export function unitCostUsd(pricing: Pricing | undefined, units: Units): number {
  // Price per unit in µ$ times the units: one product, so more units never round to less.
  return microsToUsd(chargedMicros((pricing?.perSearch ?? 0) * 1_000_000 * (units.searches ?? 0)));
}

/** The most a request of these units can cost on any deployment of these models (for the hold). */
export function dearestUnitCostUsd(routes: readonly ModelRoute[], units: Units): number {
  let worst = 0;
  for (const d of routes.flatMap((r) => r.deployments))
    worst = Math.max(worst, unitCostUsd(d.pricing, units));
  return worst;
}
