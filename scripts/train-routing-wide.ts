/**
 * Trains the routing outcome model on many domains and chooses its configuration by
 * leave-one-domain-out (LODO) AUC only: for each training domain, a model fitted on the OTHER
 * domains ranks that domain's prompts. The hypothesis: with two to four domains a model learns
 * domain-specific cues; with many, the cues that transfer survive.
 *
 *   npx tsx scripts/train-routing-wide.ts <lm-sys/RouteLLM git dir> [--write] [--features] [--select]
 *
 * Domains: RouteLLM MMLU (training subjects only: the dev subjects calibrate, the test subjects
 * are never read), FastChat's Vicuna bench (vicuna-dev.jsonl) and the files that
 * scripts/build-routing-wide.ts writes to test/data/routing/outcomes/wide/ (BIG-Bench Hard,
 * SVAMP, APPS and the DRAW-1K and HumanEval/MBPP training quarters). Nothing else is read: no
 * test split, no unseen domain. Each domain has its own intercept (each label comes from
 * another pair of models, with its own base rate) and a domain weight.
 *
 * It prints, per domain, the LODO AUC of every configuration and the AUC of the shipped weights
 * (outcome-weights.ts: an honest figure only for domains the shipped model never trained on).
 * With --write, the chosen configuration is fitted on every domain, Platt-calibrated on the MMLU
 * dev subjects under MMLU's intercept (as the shipped model is, so p >= 0.3 keeps its meaning)
 * and written to outcome-weights.ts. Deterministic: fixed order, full-batch Adam, no randomness.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { auc } from '../dataplane/src/pipeline/routing/auc.ts';
import { extractFeatures } from '../dataplane/src/pipeline/routing/features.ts';
import {
  DENSE_NAMES,
  denseFeatures,
  hashedBuckets,
  HASH_BUCKETS,
} from '../dataplane/src/pipeline/routing/outcome-features.ts';
import { OUTCOME_WEIGHTS } from '../dataplane/src/pipeline/routing/outcome-weights.ts';
import {
  SEEN_DOMAINS as DOMAINS,
  loadSeenDomains,
  SHIPPED_TRAINED_ON,
  type SeenDomain as Domain,
} from './routing-seen-domains.ts';

const args = process.argv.slice(2);
const routeLlmDir = args.find((a) => !a.startsWith('--'));
const write = args.includes('--write');
if (!routeLlmDir) throw new Error('usage: train-routing-wide.ts <RouteLLM git dir> [--write]');

interface Row {
  text: string;
  weakFails: boolean;
  domain: number;
}
// MMLU's training subjects, then each committed domain file, in DOMAINS order.
const seen = loadSeenDomains(routeLlmDir);
const rows: Row[] = DOMAINS.flatMap((d, domain) =>
  seen.rowsOf[d].map((r) => ({ text: r.text, weakFails: r.weakFails, domain })),
);
const mmluDev: Row[] = seen.mmluDev.map((r) => ({ text: r.text, weakFails: r.weakFails, domain: 0 }));

// --- Features ------------------------------------------------------------------------------------
interface Example {
  dense: number[];
  buckets: number[];
  y: number;
  domain: number;
}
const toExample = (r: Row): Example => ({
  dense: denseFeatures(
    extractFeatures({ model: 'x', messages: [{ role: 'user', content: r.text }] }),
    r.text,
  ),
  buckets: hashedBuckets(r.text),
  y: r.weakFails ? 1 : 0,
  domain: r.domain,
});
const examples = rows.map(toExample);
const devExamples = mmluDev.map(toExample);
const D = DENSE_NAMES.length;
const ND = DOMAINS.length;

interface Params {
  l2Dense: number;
  /** L2 on the hashed n-grams; null leaves them out. */
  l2Hashed: number | null;
  /**
   * How a domain's total weight follows its size: 1 gives every domain the same total weight,
   * 0.5 a total weight growing with the square root of its row count, 0 plain row counts.
   */
  balance: number;
  /**
   * Keep only dense features whose direction agrees across the training domains (univariate AUC
   * on each on the same side of 0.5), held to that sign; a disputed one stays 0.
   */
  invariant: boolean;
  /** The domains trained on (all when absent); a domain left out is always scored unseen. */
  train?: Domain[];
}
interface Model {
  bias: Float64Array;
  dense: Float64Array;
  hashed: Float64Array;
}

function logit(m: Model, ex: Example, domain: number): number {
  const scale = ex.buckets.length ? 1 / Math.sqrt(ex.buckets.length) : 0;
  let z = m.bias[domain] as number;
  for (let i = 0; i < D; i++) z += (ex.dense[i] as number) * (m.dense[i] as number);
  for (const b of ex.buckets) z += scale * (m.hashed[b] as number);
  return z;
}

function agreedSigns(train: Example[]): number[] {
  const signs = new Array<number>(D).fill(0);
  for (let i = 0; i < D; i++) {
    let dir = 0;
    let conflict = false;
    for (let d = 0; d < ND; d++) {
      const own = train.filter((ex) => ex.domain === d);
      if (own.length < 50) continue;
      const a = auc(
        own.map((ex) => ex.dense[i] as number),
        own.map((ex) => ex.y >= 0.5),
      );
      if (Number.isNaN(a) || Math.abs(a - 0.5) < 0.02) continue;
      const s = a > 0.5 ? 1 : -1;
      if (dir !== 0 && s !== dir) conflict = true;
      dir = s;
    }
    signs[i] = conflict ? 0 : dir;
  }
  return signs;
}

/** Full-batch Adam on domain-weighted cross-entropy with L2 (intercepts free). */
function fit(train: Example[], p: Params, steps = 300): Model {
  const signs = p.invariant ? agreedSigns(train) : null;
  const K = ND + D + HASH_BUCKETS;
  const theta = new Float64Array(K);
  const mom = new Float64Array(K);
  const vel = new Float64Array(K);
  const count = new Array<number>(ND).fill(0);
  for (const ex of train) count[ex.domain] = (count[ex.domain] as number) + 1;
  // Domain total weight n^(1 - balance), spread over its rows.
  const rowWeight = count.map((n) => (n === 0 ? 0 : n ** (1 - p.balance) / n));
  const total = train.reduce((s, ex) => s + (rowWeight[ex.domain] as number), 0);
  const m: Model = {
    bias: theta.subarray(0, ND),
    dense: theta.subarray(ND, ND + D),
    hashed: theta.subarray(ND + D),
  };
  const lr = 0.05;
  for (let step = 1; step <= steps; step++) {
    const g = new Float64Array(K);
    for (const ex of train) {
      const w = rowWeight[ex.domain] as number;
      const scale = ex.buckets.length ? 1 / Math.sqrt(ex.buckets.length) : 0;
      const err = (1 / (1 + Math.exp(-logit(m, ex, ex.domain))) - ex.y) * w;
      g[ex.domain] = (g[ex.domain] as number) + err;
      for (let i = 0; i < D; i++) g[ND + i] = (g[ND + i] as number) + err * (ex.dense[i] as number);
      if (p.l2Hashed !== null)
        for (const b of ex.buckets) g[ND + D + b] = (g[ND + D + b] as number) + err * scale;
    }
    for (let k = 0; k < K; k++) {
      if (k >= ND + D && p.l2Hashed === null) break;
      if (k < ND && count[k] === 0) continue;
      const param = theta[k] as number;
      const l2 = k < ND ? 0 : k < ND + D ? p.l2Dense : (p.l2Hashed ?? 0);
      const grad = (g[k] as number) / total + l2 * param;
      mom[k] = 0.9 * (mom[k] as number) + 0.1 * grad;
      vel[k] = 0.999 * (vel[k] as number) + 0.001 * grad * grad;
      theta[k] =
        param -
        (lr * ((mom[k] as number) / (1 - 0.9 ** step))) /
          (Math.sqrt((vel[k] as number) / (1 - 0.999 ** step)) + 1e-8);
      if (signs && k >= ND && k < ND + D) {
        const s = signs[k - ND] as number;
        if (s === 0 || (theta[k] as number) * s < 0) theta[k] = 0;
      }
    }
  }
  return { bias: m.bias.slice(), dense: m.dense.slice(), hashed: m.hashed.slice() };
}

const byDomain = DOMAINS.map((_, d) => examples.filter((ex) => ex.domain === d));
const aucOn = (score: (ex: Example) => number, exs: Example[]): number =>
  auc(
    exs.map(score),
    exs.map((ex) => ex.y === 1),
  );

/** LODO AUC per domain: a model fitted without the domain ranks its rows. */
function lodo(p: Params): number[] {
  const inTrain = DOMAINS.map((d) => !p.train || p.train.includes(d));
  const trainEx = examples.filter((ex) => inTrain[ex.domain]);
  let outside: Model | undefined;
  return DOMAINS.map((_, d) => {
    const m = inTrain[d]
      ? fit(
          trainEx.filter((ex) => ex.domain !== d),
          p,
        )
      : (outside ??= fit(trainEx, p));
    // The intercept does not change a ranking inside one domain; MMLU's is as good as any.
    return aucOn((ex) => logit(m, ex, 0), byDomain[d] as Example[]);
  });
}

// The shipped weights on the same rows (its own bias; only the ranking matters).
const shipped: Model = {
  bias: new Float64Array(ND).fill(OUTCOME_WEIGHTS.bias),
  dense: Float64Array.from(OUTCOME_WEIGHTS.dense),
  hashed: Float64Array.from(OUTCOME_WEIGHTS.hashed),
};
const shippedAuc = DOMAINS.map((_, d) => aucOn((ex) => logit(shipped, ex, 0), byDomain[d] as Example[]));
const mean = (xs: number[]): number => xs.reduce((s, x) => s + x, 0) / xs.length;
const honest = DOMAINS.map((d, i) => (SHIPPED_TRAINED_ON.has(d) ? -1 : i)).filter((i) => i >= 0);
const summary = (a: number[]): string =>
  `${DOMAINS.map((d, i) => `${d} ${(a[i] as number).toFixed(3)}`).join(', ')}; mean ${mean(a).toFixed(3)}, ` +
  `worst ${Math.min(...a).toFixed(3)}; on the shipped model's unseen domains mean ${mean(honest.map((i) => a[i] as number)).toFixed(3)}`;
console.log(
  `rows: ${DOMAINS.map((d, i) => `${d} ${byDomain[i]?.length}`).join(', ')}; MMLU dev (calibration) ${mmluDev.length}`,
);
console.log(`shipped weights (mmlu, vicuna in-sample): ${summary(shippedAuc)}`);

// --features: each dense feature's own AUC per domain (does a cue point the same way everywhere?).
if (args.includes('--features'))
  DENSE_NAMES.forEach((name, i) =>
    console.log(
      `${name}: ${DOMAINS.map((d, k) => `${d} ${aucOn((ex) => ex.dense[i] as number, byDomain[k] as Example[]).toFixed(2)}`).join(', ')}`,
    ),
  );

// --select: greedy forward selection of dense features (no n-grams) by mean LODO AUC, the
// choice made inside each outer fold on the other domains only (nested), so the printed
// outer figure is a model and a feature set that never saw the domain.
if (args.includes('--select')) {
  const selP = (features: number[]): Params & { features: number[] } => ({
    l2Dense: 1e-3,
    l2Hashed: null,
    balance: 0.5,
    invariant: false,
    features,
  });
  const masked = (exs: Example[], features: number[]): Example[] =>
    exs.map((ex) => ({ ...ex, dense: ex.dense.map((v, i) => (features.includes(i) ? v : 0)), buckets: [] }));
  /** Mean AUC over `folds`, each ranked by a model fitted on `pool` minus that fold. */
  const meanLodo = (pool: number[], features: number[]): number =>
    mean(
      pool.map((d) => {
        const train = masked(
          examples.filter((ex) => pool.includes(ex.domain) && ex.domain !== d),
          features,
        );
        const m = fit(train, selP(features), 150);
        return aucOn((ex) => logit(m, ex, 0), masked(byDomain[d] as Example[], features));
      }),
    );
  const select = (pool: number[]): number[] => {
    let chosen: number[] = [];
    let bestScore = 0.5;
    for (;;) {
      let step: { f: number; score: number } | undefined;
      for (let f = 0; f < D; f++) {
        if (chosen.includes(f)) continue;
        const score = meanLodo(pool, [...chosen, f]);
        if (!step || score > step.score) step = { f, score };
      }
      // Stop when no feature adds half a point.
      if (!step || step.score < bestScore + 0.005) return chosen;
      chosen = [...chosen, step.f];
      bestScore = step.score;
    }
  };
  const all = DOMAINS.map((_, d) => d);
  const outer = all.map((d) => {
    const pool = all.filter((x) => x !== d);
    const features = select(pool);
    const m = fit(
      masked(
        examples.filter((ex) => ex.domain !== d),
        features,
      ),
      selP(features),
    );
    const a = aucOn((ex) => logit(m, ex, 0), masked(byDomain[d] as Example[], features));
    console.log(
      `held out ${DOMAINS[d]}: features ${features.map((i) => DENSE_NAMES[i]).join(', ')}; AUC ${a.toFixed(3)}`,
    );
    return a;
  });
  console.log(`nested LODO (selection): ${summary(outer)}`);
  const features = select(all);
  console.log(`selected on all domains: ${features.map((i) => DENSE_NAMES[i]).join(', ')}`);
}

const grid: Params[] = [];
for (const invariant of [false, true])
  for (const balance of [1, 0.5, 0])
    for (const l2Hashed of [null, 1e-2, 3e-2]) grid.push({ l2Dense: 1e-3, l2Hashed, balance, invariant });
// WIDE_CONFIGS: a JSON array of configurations to score instead of the grid (exploration).
const only = process.env.WIDE_CONFIGS ? (JSON.parse(process.env.WIDE_CONFIGS) as Params[]) : undefined;

let best: { p: Params; a: number[]; score: number } | undefined;
for (const p of only ?? grid) {
  const a = lodo(p);
  // The choice rule: mean LODO AUC and worst domain count alike.
  const score = (mean(a) + Math.min(...a)) / 2;
  console.log(`${JSON.stringify(p)}: LODO ${summary(a)}; score ${score.toFixed(3)}`);
  if (!best || score > best.score) best = { p, a, score };
}
// WIDE_CONFIGS='[]' with --select or --features: only the diagnostics.
if (!best) process.exit(only ? 0 : 1);
console.log(`chosen ${JSON.stringify(best.p)}`);

if (write) {
  const model = fit(
    examples.filter((ex) => !best.p.train || best.p.train.includes(DOMAINS[ex.domain] as Domain)),
    best.p,
  );
  const z = devExamples.map((ex) => logit(model, ex, 0));
  let a = 1;
  let b = 0;
  for (let it = 0; it < 3000; it++) {
    let ga = 0;
    let gb = 0;
    z.forEach((zi, i) => {
      const err = 1 / (1 + Math.exp(-(a * zi + b))) - (mmluDev[i]?.weakFails ? 1 : 0);
      ga += err * zi;
      gb += err;
    });
    a -= (0.5 * ga) / z.length;
    b -= (0.5 * gb) / z.length;
  }
  const r4 = (x: number): number => Math.round(x * 1e4) / 1e4;
  const mmluRows = byDomain[0] as Example[];
  const baseRate = mmluRows.filter((ex) => ex.y === 1).length / mmluRows.length;
  const weightsFile = new URL('../dataplane/src/pipeline/routing/outcome-weights.ts', import.meta.url);
  writeFileSync(
    weightsFile,
    `// Generated by scripts/train-routing-wide.ts (domains: ${DOMAINS.join(', ')}; ${examples.length} rows).\n` +
      `// Chosen by leave-one-domain-out AUC: ${JSON.stringify(best.p)}; LODO ${DOMAINS.map((d, i) => `${d} ${(best.a[i] as number).toFixed(3)}`).join(', ')}.\n` +
      `// Platt-calibrated on MMLU dev under MMLU's intercept (a=${r4(a)}, b=${r4(b)}), folded into the weights. Do not edit.\n` +
      `// Dense order: ${DENSE_NAMES.join(', ')}.\n` +
      `import type { OutcomeWeights } from './outcome.ts';\n\n` +
      `export const OUTCOME_WEIGHTS: OutcomeWeights = {\n  bias: ${r4(a * (model.bias[0] as number) + b)},\n  baseRate: ${r4(baseRate)},\n` +
      `  dense: [${[...model.dense].map((x) => r4(a * x)).join(', ')}],\n` +
      `  hashed: [${[...model.hashed].map((x) => r4(a * x)).join(', ')}],\n};\n`,
  );
  execFileSync('npx', ['prettier', '--write', fileURLToPath(weightsFile)], { stdio: 'ignore' });
  console.log(`wrote ${fileURLToPath(weightsFile)} (Platt a=${r4(a)}, b=${r4(b)})`);
}
