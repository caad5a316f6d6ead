/**
 * The per-domain-sum recipe of the leave-one-domain-out routing experiments
 * (train-routing-static.ts, train-routing-items.ts): one L2 logistic regression per domain,
 * its score standardised on its own rows (mean 0, unit spread) so domains add on one scale; a
 * held-out domain is ranked by the sum of the other domains' models, so what transfers is
 * ranking inside a domain, not the gap between base rates. Deterministic: full-batch Adam.
 */
import { auc } from '../dataplane/src/pipeline/routing/auc.ts';

export interface Example {
  x: Float64Array;
  label: boolean;
}
export interface DomainModel {
  bias: number;
  w: Float64Array;
}

export const dot = (w: Float64Array, x: Float64Array): number => {
  let z = 0;
  for (let k = 0; k < x.length; k++) z += (w[k] as number) * (x[k] as number);
  return z;
};

/**
 * Adam (400 steps) on the mean cross-entropy + L2 as scikit-learn's C (1/(C·n)), intercept
 * free. With `standardise`, inputs are first scaled to mean 0 and unit spread on these rows
 * (a constant input gets weight 0) and the weights folded back, so features of any scale share
 * one penalty.
 */
export function fitDomain(ex: Example[], c: number, standardise = false): DomainModel {
  const K = ex[0]?.x.length ?? 0;
  const centre = new Float64Array(K);
  const spread = new Float64Array(K).fill(1);
  if (standardise) {
    for (let k = 0; k < K; k++) {
      const m = ex.reduce((s, e) => s + (e.x[k] as number), 0) / ex.length;
      const sd = Math.sqrt(ex.reduce((s, e) => s + ((e.x[k] as number) - m) ** 2, 0) / ex.length);
      centre[k] = m;
      // A constant input carries nothing: an infinite spread makes it 0.
      spread[k] = sd > 1e-9 ? sd : Infinity;
    }
  }
  const xs = standardise
    ? ex.map((e) => e.x.map((v, k) => (v - (centre[k] as number)) / (spread[k] as number)))
    : ex.map((e) => e.x);
  const size = 1 + K;
  const theta = new Float64Array(size);
  const mom = new Float64Array(size);
  const vel = new Float64Array(size);
  const l2 = 1 / (c * ex.length);
  for (let step = 1; step <= 400; step++) {
    const g = new Float64Array(size);
    const w = theta.subarray(1);
    ex.forEach((e, i) => {
      const x = xs[i] as Float64Array;
      const err = 1 / (1 + Math.exp(-((theta[0] as number) + dot(w, x)))) - (e.label ? 1 : 0);
      g[0] = (g[0] as number) + err;
      for (let k = 0; k < K; k++) g[1 + k] = (g[1 + k] as number) + err * (x[k] as number);
    });
    for (let k = 0; k < size; k++) {
      const gk = (g[k] as number) / ex.length + (k === 0 ? 0 : l2 * (theta[k] as number));
      mom[k] = 0.9 * (mom[k] as number) + 0.1 * gk;
      vel[k] = 0.999 * (vel[k] as number) + 0.001 * gk * gk;
      theta[k] =
        (theta[k] as number) -
        (0.05 * ((mom[k] as number) / (1 - 0.9 ** step))) /
          (Math.sqrt((vel[k] as number) / (1 - 0.999 ** step)) + 1e-8);
    }
  }
  // Back to raw inputs: w/spread, and the centring moved into the bias.
  const w = theta.subarray(1).map((v, k) => v / (spread[k] as number));
  const bias = (theta[0] as number) - dot(w, centre);
  const z = ex.map((e) => bias + dot(w, e.x));
  const mean = z.reduce((s, v) => s + v, 0) / z.length;
  const sd = Math.sqrt(z.reduce((s, v) => s + (v - mean) ** 2, 0) / z.length) || 1;
  return { bias: (bias - mean) / sd, w: w.map((v) => v / sd) };
}

export const aucOf = (scores: number[], ex: Example[]): number =>
  auc(
    scores,
    ex.map((e) => e.label),
  );

/** Each held-out domain ranked by the sum of the other domains' models. */
export function lodo<D extends string>(
  models: Record<D, DomainModel>,
  examples: Record<D, Example[]>,
  domains: readonly D[],
): Record<string, number> {
  return Object.fromEntries(
    domains.map((held) => {
      const others = domains.filter((d) => d !== held).map((d) => models[d]);
      return [
        held,
        aucOf(
          examples[held].map((e) => others.reduce((s, m) => s + m.bias + dot(m.w, e.x), 0)),
          examples[held],
        ),
      ];
    }),
  );
}

/** One printed line: per-domain AUCs, their mean and the worst. */
export function line(name: string, per: Record<string, number>): void {
  const v = Object.values(per);
  console.log(
    `${name}: ${Object.entries(per)
      .map(([d, a]) => `${d} ${a.toFixed(3)}`)
      .join(
        ', ',
      )}; mean ${(v.reduce((s, x) => s + x, 0) / v.length).toFixed(3)}, worst ${Math.min(...v).toFixed(3)}`,
  );
}
