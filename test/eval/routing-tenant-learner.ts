/**
 * Experiment (not shipped): per-tenant calibration of the difficulty score from observed
 * outcomes. A tenant reports, for some of its requests, whether the weak model's answer failed;
 * this learner keeps the most recent labelled requests in a bounded ring and refits a small
 * L2 logistic regression on them, with the shipped model's log-odds as a fixed offset, so that
 * with no labels it ranks exactly like the shipped score and every label can only move the
 * tenant's own ranking. Pure functions over plain values; the simulation lives in
 * routing-tenant-tune.ts (seen domains) and routing-tenant-unseen.ts (the one-shot look).
 */
import { auc } from '../../dataplane/src/pipeline/routing/auc.ts';
import type { ChatRequest } from '../../dataplane/src/formats/openai/types.ts';
import { extractFeatures } from '../../dataplane/src/pipeline/routing/features.ts';
import { lastUserText, weakFailLogit } from '../../dataplane/src/pipeline/routing/outcome.ts';
import {
  denseFeatures,
  hashedBuckets,
  HASH_BUCKETS,
} from '../../dataplane/src/pipeline/routing/outcome-features.ts';

/** Which of the request's numbers the tenant model may re-weight beside the shipped offset. */
export type FeatureSet = 'calibrate' | 'dense' | 'hashed' | 'all';

export interface TenantLearnerConfig {
  features: FeatureSet;
  /** L2 penalty on the summed log-loss (bias unpenalised): strong with few labels, fading with more. */
  l2: number;
  /** Ring size: labelled requests kept per tenant; older ones are forgotten. */
  capacity: number;
  /** Full-batch Adam steps per refit (deterministic, no randomness). */
  steps: number;
  /**
   * Folds of the ring's cross-validation guard (0: off): the tenant model is served only when
   * its out-of-fold AUC on the ring beats the shipped score's AUC on the same ring.
   */
  guardFolds: number;
}

/** What the learner keeps of one request: no text, only numbers the shipped classifier computes. */
export interface TenantExample {
  /** The shipped outcome model's log-odds that the weak model fails. */
  base: number;
  /** The shipped model's 21 dense features (outcome-features.ts, already scaled to about 0..1). */
  dense: Float32Array;
  /** Distinct hashed unigram/bigram buckets of the ask's first 1,500 characters. */
  buckets: Uint16Array;
}

export interface TenantState {
  readonly examples: readonly TenantExample[];
  readonly labels: readonly boolean[];
  /** Next ring slot to overwrite once the ring is full. */
  readonly next: number;
}

export interface TenantModel {
  bias: number;
  /** Extra weight on the shipped log-odds (effective weight 1 + this). */
  baseWeight: number;
  denseMean: Float64Array;
  denseScale: Float64Array;
  dense: Float64Array;
  hashed: Float64Array;
}

/**
 * Frozen before any unseen domain was scored: chosen by routing-tenant-tune.ts on the seen
 * domains only (stage 1: hashed n-grams with L2 0.3, mean tenant AUC 0.653 against 0.583 for the
 * shipped score; stage 2: the cross-validation guard lowered it to 0.646, so it stays off).
 */
export const TENANT_CONFIG: Readonly<TenantLearnerConfig> = {
  features: 'hashed',
  l2: 0.3,
  capacity: 500,
  steps: 300,
  guardFolds: 0,
};

export const DENSE_COUNT = 21;
/** log_words is dense feature 0: the length cue 'calibrate' keeps. */
const LENGTH_INDEX = 0;

export function exampleOf(req: ChatRequest): TenantExample {
  const f = extractFeatures(req);
  const text = lastUserText(req);
  return {
    base: weakFailLogit(f, text),
    dense: Float32Array.from(denseFeatures(f, text)),
    buckets: Uint16Array.from(hashedBuckets(text)),
  };
}

export const emptyState = (): TenantState => ({ examples: [], labels: [], next: 0 });

/** Adds one labelled request; at capacity the oldest is replaced, so memory stays bounded. */
export function observe(
  state: TenantState,
  example: TenantExample,
  weakFailed: boolean,
  config: Pick<TenantLearnerConfig, 'capacity'>,
): TenantState {
  if (state.examples.length < config.capacity)
    return { examples: [...state.examples, example], labels: [...state.labels, weakFailed], next: 0 };
  const examples = state.examples.slice();
  const labels = state.labels.slice();
  examples[state.next] = example;
  labels[state.next] = weakFailed;
  return { examples, labels, next: (state.next + 1) % config.capacity };
}

const usesDense = (s: FeatureSet): boolean => s === 'dense' || s === 'all';
const usesHashed = (s: FeatureSet): boolean => s === 'hashed' || s === 'all';
const usesDenseIndex = (s: FeatureSet, i: number): boolean => usesDense(s) || i === LENGTH_INDEX;

/** The tenant's log-odds offset over the shipped score: 0 for an unfitted model. */
function delta(m: TenantModel, x: TenantExample): number {
  let z = m.bias + m.baseWeight * x.base;
  for (let i = 0; i < DENSE_COUNT; i++) {
    const w = m.dense[i] as number;
    if (w !== 0)
      z += w * (((x.dense[i] as number) - (m.denseMean[i] as number)) * (m.denseScale[i] as number));
  }
  const scale = x.buckets.length ? 1 / Math.sqrt(x.buckets.length) : 0;
  for (const b of x.buckets) z += scale * (m.hashed[b] as number);
  return z;
}

/** The tenant-calibrated log-odds that the weak model fails. */
export const tenantScore = (m: TenantModel, x: TenantExample): number => x.base + delta(m, x);

export function zeroModel(): TenantModel {
  return {
    bias: 0,
    baseWeight: 0,
    denseMean: new Float64Array(DENSE_COUNT),
    denseScale: new Float64Array(DENSE_COUNT),
    dense: new Float64Array(DENSE_COUNT),
    hashed: new Float64Array(HASH_BUCKETS),
  };
}

/**
 * Refits the tenant model on the ring: L2 logistic regression of the labels with the shipped
 * log-odds as offset (so the penalty pulls towards the shipped ranking, not towards chance).
 * Dense features are standardised on the ring itself: the tenant's own spread, no global data.
 */
export function fit(state: TenantState, config: TenantLearnerConfig): TenantModel {
  const m = zeroModel();
  const n = state.examples.length;
  if (n === 0) return m;
  const set = config.features;
  for (let i = 0; i < DENSE_COUNT; i++) {
    if (!usesDenseIndex(set, i)) continue;
    let s = 0;
    let s2 = 0;
    for (const x of state.examples) {
      const v = x.dense[i] as number;
      s += v;
      s2 += v * v;
    }
    const mean = s / n;
    const sd = Math.sqrt(Math.max(s2 / n - mean * mean, 0));
    m.denseMean[i] = mean;
    // A feature constant in this tenant's traffic carries nothing: scale 0 keeps its weight idle.
    m.denseScale[i] = sd > 1e-6 ? 1 / sd : 0;
  }
  const hashed = usesHashed(set);
  // Adam state over bias, baseWeight, dense, hashed (flat layout).
  const dim = 2 + DENSE_COUNT + HASH_BUCKETS;
  const g = new Float64Array(dim);
  const m1 = new Float64Array(dim);
  const m2 = new Float64Array(dim);
  const lr = 0.05;
  const b1 = 0.9;
  const b2 = 0.999;
  const std = state.examples.map((x) => {
    const v = new Float64Array(DENSE_COUNT);
    for (let i = 0; i < DENSE_COUNT; i++)
      v[i] = ((x.dense[i] as number) - (m.denseMean[i] as number)) * (m.denseScale[i] as number);
    return v;
  });
  for (let t = 1; t <= config.steps; t++) {
    g.fill(0);
    for (let k = 0; k < n; k++) {
      const x = state.examples[k] as TenantExample;
      const z = tenantScore(m, x);
      const r = 1 / (1 + Math.exp(-z)) - (state.labels[k] ? 1 : 0);
      g[0] = (g[0] as number) + r;
      g[1] = (g[1] as number) + r * x.base;
      const v = std[k] as Float64Array;
      for (let i = 0; i < DENSE_COUNT; i++)
        if (usesDenseIndex(set, i)) g[2 + i] = (g[2 + i] as number) + r * (v[i] as number);
      if (hashed) {
        const scale = x.buckets.length ? 1 / Math.sqrt(x.buckets.length) : 0;
        for (const b of x.buckets) g[2 + DENSE_COUNT + b] = (g[2 + DENSE_COUNT + b] as number) + r * scale;
      }
    }
    g[1] = (g[1] as number) + config.l2 * m.baseWeight;
    for (let i = 0; i < DENSE_COUNT; i++)
      g[2 + i] = (g[2 + i] as number) + config.l2 * (m.dense[i] as number);
    if (hashed)
      for (let b = 0; b < HASH_BUCKETS; b++)
        g[2 + DENSE_COUNT + b] = (g[2 + DENSE_COUNT + b] as number) + config.l2 * (m.hashed[b] as number);
    const c1 = 1 - b1 ** t;
    const c2 = 1 - b2 ** t;
    for (let j = 0; j < dim; j++) {
      const gj = g[j] as number;
      if (gj === 0 && m1[j] === 0) continue;
      m1[j] = b1 * (m1[j] as number) + (1 - b1) * gj;
      m2[j] = b2 * (m2[j] as number) + (1 - b2) * gj * gj;
      const step = (lr * ((m1[j] as number) / c1)) / (Math.sqrt((m2[j] as number) / c2) + 1e-8);
      if (j === 0) m.bias -= step;
      else if (j === 1) m.baseWeight -= step;
      else if (j < 2 + DENSE_COUNT) m.dense[j - 2] = (m.dense[j - 2] as number) - step;
      else m.hashed[j - 2 - DENSE_COUNT] = (m.hashed[j - 2 - DENSE_COUNT] as number) - step;
    }
  }
  return m;
}

const subset = (state: TenantState, keep: (i: number) => boolean): TenantState => ({
  examples: state.examples.filter((_, i) => keep(i)),
  labels: state.labels.filter((_, i) => keep(i)),
  next: 0,
});

/**
 * The model to serve for the tenant: fit() on the whole ring, unless the guard is on and the
 * ring's own out-of-fold ranking says the refit does not beat the shipped score (then the zero
 * model, i.e. the shipped score). Folds by ring position, so the result is deterministic.
 */
export function fitGuarded(state: TenantState, config: TenantLearnerConfig): TenantModel {
  const k = config.guardFolds;
  if (k < 2) return fit(state, config);
  const n = state.examples.length;
  const outOfFold = new Array<number>(n).fill(0);
  for (let f = 0; f < k; f++) {
    const m = fit(
      subset(state, (i) => i % k !== f),
      config,
    );
    for (let i = f; i < n; i += k) outOfFold[i] = tenantScore(m, state.examples[i] as TenantExample);
  }
  const cv = auc(outOfFold, state.labels);
  const shipped = auc(
    state.examples.map((x) => x.base),
    state.labels,
  );
  // NaN (one class only in the ring) fails the comparison: keep the shipped score.
  return cv > shipped ? fit(state, config) : zeroModel();
}

/** Upper bound of a tenant's ring in bytes (typed arrays only), for the memory budget. */
export function stateBytes(state: TenantState): number {
  return state.examples.reduce((s, x) => s + 8 + x.dense.byteLength + x.buckets.byteLength, 0);
}
