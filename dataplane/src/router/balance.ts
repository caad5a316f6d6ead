/**
 * Deployment order for one model, as a pure function: priority groups lowest first; inside
 * a group a weighted random order that favours idle and fast deployments; unavailable
 * deployments (open circuit, rate-limit cooldown) are left out.
 */
import type { Deployment } from '../config/snapshot.ts';
import type { Availability, HealthView } from './health.ts';

export interface BalanceInput {
  deployments: readonly Deployment[];
  view: (d: Deployment) => HealthView;
  availability: (d: Deployment) => Availability;
  random: () => number;
}

export interface Skipped {
  deployment: Deployment;
  until: number;
  reason: 'circuit_open' | 'cooldown';
}

export function orderDeployments(input: BalanceInput): { ordered: Deployment[]; skipped: Skipped[] } {
  const ordered: Deployment[] = [];
  const skipped: Skipped[] = [];
  const groups = new Map<number, Deployment[]>();
  for (const d of input.deployments) {
    const a = input.availability(d);
    if (!a.ok) {
      skipped.push({ deployment: d, until: a.until, reason: a.reason });
      continue;
    }
    if (d.weight <= 0) continue;
    groups.set(d.priority, [...(groups.get(d.priority) ?? []), d]);
  }
  for (const priority of [...groups.keys()].sort((a, b) => a - b)) {
    ordered.push(...weightedOrder(groups.get(priority)!, input.view, input.random));
  }
  return { ordered, skipped };
}

/** Effective weight: configured weight, divided by load and by relative slowness. */
export function effectiveWeight(weight: number, view: HealthView, fastestMs: number): number {
  const slowness = view.latencyMs > 0 && fastestMs > 0 ? view.latencyMs / fastestMs : 1;
  return weight / ((1 + view.inflight) * slowness);
}

/** Weighted random permutation (Efraimidis–Spirakis: key = u^(1/w), largest first). */
function weightedOrder(group: Deployment[], view: (d: Deployment) => HealthView, random: () => number) {
  if (group.length === 1) return group;
  const views = group.map(view);
  const known = views.map((v) => v.latencyMs).filter((ms) => ms > 0);
  const fastest = known.length > 0 ? Math.min(...known) : 0;
  return group
    .map((d, i) => ({ d, key: random() ** (1 / effectiveWeight(d.weight, views[i]!, fastest)) }))
    .sort((a, b) => b.key - a.key)
    .map((x) => x.d);
}
