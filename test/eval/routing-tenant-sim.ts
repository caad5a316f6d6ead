/**
 * The tenant simulation shared by routing-tenant-tune.ts and routing-tenant-unseen.ts: one
 * domain is one tenant's traffic; shuffled with a fixed seed, its first N outcomes are fed to the
 * learner as feedback and both the shipped score and the tenant-calibrated score are ranked on
 * the rest (the learner does not keep learning there, so the figure is conservative).
 */
import { auc } from '../../dataplane/src/pipeline/routing/auc.ts';
import { asRequest, type OutcomeRow } from './routing-outcomes.ts';
import {
  emptyState,
  exampleOf,
  fitGuarded,
  observe,
  tenantScore,
  type TenantExample,
  type TenantLearnerConfig,
} from './routing-tenant-learner.ts';

/** Labels fed before scoring. */
export const LABEL_COUNTS = [50, 100, 200, 500] as const;
/** A cell is reported only when this many rows are left to rank (else its AUC is mostly noise). */
export const MIN_REST = 75;

export interface TenantRows {
  examples: TenantExample[];
  labels: boolean[];
}

export const tenantRows = (rows: readonly OutcomeRow[]): TenantRows => ({
  examples: rows.map((r) => exampleOf(asRequest(r.text))),
  labels: rows.map((r) => r.weakFails),
});

/** mulberry32: small, deterministic, enough for shuffles and resampling. */
export function generator(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Fisher-Yates order of 0..n-1 for a seed. */
export function order(n: number, seed: number): number[] {
  const next = generator(seed);
  const idx = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [idx[i], idx[j]] = [idx[j] as number, idx[i] as number];
  }
  return idx;
}

export interface CellScores {
  shipped: number[];
  tenant: number[];
  labels: boolean[];
}

/** Feeds the first n of the seed's order, returns both scores on the rest. */
export function simulate(data: TenantRows, n: number, seed: number, config: TenantLearnerConfig): CellScores {
  const idx = order(data.examples.length, seed);
  let state = emptyState();
  for (const i of idx.slice(0, n))
    state = observe(state, data.examples[i] as TenantExample, data.labels[i] === true, config);
  const model = fitGuarded(state, config);
  const rest = idx.slice(n);
  return {
    shipped: rest.map((i) => (data.examples[i] as TenantExample).base),
    tenant: rest.map((i) => tenantScore(model, data.examples[i] as TenantExample)),
    labels: rest.map((i) => data.labels[i] === true),
  };
}

export interface PairedInterval {
  shipped: [number, number];
  tenant: [number, number];
  /** Tenant minus shipped, on the same resamples. */
  gain: [number, number];
}

/** 95 % bootstrap intervals (1,000 resamples of the rest, fixed seed), paired. */
export function pairedInterval(c: CellScores): PairedInterval {
  const next = generator(0x9e3779b9);
  const n = c.labels.length;
  const a: number[] = [];
  const b: number[] = [];
  const d: number[] = [];
  for (let r = 0; r < 1000; r++) {
    const s: number[] = [];
    const t: number[] = [];
    const y: boolean[] = [];
    for (let i = 0; i < n; i++) {
      const k = Math.floor(next() * n);
      s.push(c.shipped[k] as number);
      t.push(c.tenant[k] as number);
      y.push(c.labels[k] === true);
    }
    const x = auc(s, y);
    const z = auc(t, y);
    if (Number.isNaN(x) || Number.isNaN(z)) continue;
    a.push(x);
    b.push(z);
    d.push(z - x);
  }
  const q = (v: number[]): [number, number] => {
    v.sort((x, z) => x - z);
    return [v[Math.floor(0.025 * v.length)] ?? Number.NaN, v[Math.floor(0.975 * v.length)] ?? Number.NaN];
  };
  return { shipped: q(a), tenant: q(b), gain: q(d) };
}

export interface DomainCell {
  n: number;
  rest: number;
  /** The reported shuffle (seed 0) with its intervals. */
  shipped: number;
  tenant: number;
  interval: PairedInterval;
  /** Mean over `shuffles` further shuffles (seeds 1..shuffles): the shuffle's own luck averaged out. */
  meanShipped: number;
  meanTenant: number;
}

export function domainCells(data: TenantRows, config: TenantLearnerConfig, shuffles: number): DomainCell[] {
  const cells: DomainCell[] = [];
  for (const n of LABEL_COUNTS) {
    const rest = data.labels.length - n;
    if (rest < MIN_REST) continue;
    const c = simulate(data, n, 0, config);
    let ms = 0;
    let mt = 0;
    for (let seed = 1; seed <= shuffles; seed++) {
      const s = simulate(data, n, seed, config);
      ms += auc(s.shipped, s.labels) / shuffles;
      mt += auc(s.tenant, s.labels) / shuffles;
    }
    cells.push({
      n,
      rest,
      shipped: auc(c.shipped, c.labels),
      tenant: auc(c.tenant, c.labels),
      interval: pairedInterval(c),
      meanShipped: ms,
      meanTenant: mt,
    });
  }
  return cells;
}

const f3 = (x: number): string => x.toFixed(3);
const f2 = (x: number): string => x.toFixed(2);

/** One markdown table row per cell. */
export function tableRows(domain: string, cells: readonly DomainCell[]): string[] {
  return cells.map(
    (c) =>
      `| ${domain} | ${c.n} | ${c.rest} | ${f3(c.shipped)} (${f2(c.interval.shipped[0])}–${f2(c.interval.shipped[1])}) | ` +
      `${f3(c.tenant)} (${f2(c.interval.tenant[0])}–${f2(c.interval.tenant[1])}) | ` +
      `${c.interval.gain[0] >= 0 ? '+' : ''}${f2(c.interval.gain[0])}…${c.interval.gain[1] >= 0 ? '+' : ''}${f2(c.interval.gain[1])} | ` +
      `${f3(c.meanShipped)} → ${f3(c.meanTenant)} |`,
  );
}

export const TABLE_HEAD = [
  '| tenant (domain) | N labels | rest | shipped AUC (95 %) | tenant AUC (95 %) | gain 95 % | mean of 10 shuffles |',
  '|---|---|---|---|---|---|---|',
];
