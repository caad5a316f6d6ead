/**
 * Experiment (not shipped): chooses the per-tenant learner's feature set and L2 penalty
 * (routing-tenant-learner.ts) by treating each SEEN routing domain as a new tenant, and prints
 * the chosen setting's table. Reads only seen files: MMLU's dev subjects, and the wide training
 * files (BIG-Bench Hard, SVAMP, APPS, the DRAW-1K and HumanEval/MBPP training quarters). Vicuna's
 * 78 prompts leave too few to rank after 50 labels, so it is not a tenant here.
 *
 *   nice -n 19 npx tsx test/eval/routing-tenant-tune.ts
 *
 * Choice rule (fixed before running): for each setting, the tenant AUC on the rest averaged over
 * shuffles 1..10, over every N with at least MIN_REST rows left, then over domains (each domain
 * counts once); the highest mean wins, ties to the smaller feature set. Stage 2 (added after
 * stage 1 showed losses at 50 labels on MMLU and SVAMP, still on seen domains only): the winner
 * with and without a 5-fold cross-validation guard on the ring (fitGuarded), kept if it raises the
 * same mean. Shuffle 0 is kept for the reported table, never for the choice. Deterministic.
 * Stage 1 takes about ten minutes on a shared core; `--stage2 <features> <l2>` skips it.
 */
import { fileURLToPath } from 'node:url';
import { auc } from '../../dataplane/src/pipeline/routing/auc.ts';
import { loadOutcomes } from './routing-outcomes.ts';
import type { FeatureSet, TenantLearnerConfig } from './routing-tenant-learner.ts';
import {
  domainCells,
  LABEL_COUNTS,
  MIN_REST,
  simulate,
  TABLE_HEAD,
  tableRows,
  tenantRows,
  type TenantRows,
} from './routing-tenant-sim.ts';

export const SEEN_TENANTS = [
  { file: 'mmlu-dev.jsonl', name: 'MMLU dev subjects' },
  { file: 'wide/bbh.jsonl', name: 'BIG-Bench Hard' },
  { file: 'wide/svamp.jsonl', name: 'SVAMP' },
  { file: 'wide/apps.jsonl', name: 'APPS' },
  { file: 'wide/draw-train.jsonl', name: 'DRAW-1K (training quarters)' },
  { file: 'wide/code-train.jsonl', name: 'HumanEval + MBPP (training quarters)' },
] as const;

const FEATURE_SETS: readonly FeatureSet[] = ['calibrate', 'dense', 'hashed', 'all'];
const L2S = [0.3, 1, 3, 10, 30] as const;
const SHUFFLES = 10;
const STEPS = 300;
const CAPACITY = 500;

function objective(
  data: readonly TenantRows[],
  config: TenantLearnerConfig,
): { mean: number; perDomain: number[] } {
  const perDomain = data.map((d) => {
    let sum = 0;
    let cells = 0;
    for (const n of LABEL_COUNTS) {
      if (d.labels.length - n < MIN_REST) continue;
      for (let seed = 1; seed <= SHUFFLES; seed++) {
        const s = simulate(d, n, seed, config);
        sum += auc(s.tenant, s.labels);
        cells++;
      }
    }
    return sum / cells;
  });
  return { mean: perDomain.reduce((s, x) => s + x, 0) / perDomain.length, perDomain };
}

function main(): void {
  const data = SEEN_TENANTS.map((t) => tenantRows(loadOutcomes(t.file)));
  const shippedBaseline = objective(data, {
    features: 'calibrate',
    l2: 1,
    capacity: CAPACITY,
    steps: 0,
    guardFolds: 0,
  });
  console.log(
    `shipped score alone: mean ${shippedBaseline.mean.toFixed(4)} (${shippedBaseline.perDomain.map((x) => x.toFixed(3)).join(' / ')})`,
  );
  let best: { config: TenantLearnerConfig; mean: number } | undefined;
  const given = process.argv.indexOf('--stage2');
  if (given > 0) {
    const config: TenantLearnerConfig = {
      features: process.argv[given + 1] as FeatureSet,
      l2: Number(process.argv[given + 2]),
      capacity: CAPACITY,
      steps: STEPS,
      guardFolds: 0,
    };
    best = { config, mean: objective(data, config).mean };
    console.log(`stage 1 given: ${JSON.stringify(config)}: mean ${best.mean.toFixed(4)}`);
  } else
    for (const features of FEATURE_SETS)
      for (const l2 of L2S) {
        const config: TenantLearnerConfig = { features, l2, capacity: CAPACITY, steps: STEPS, guardFolds: 0 };
        const o = objective(data, config);
        console.log(
          `${features} l2=${l2}: mean ${o.mean.toFixed(4)} (${o.perDomain.map((x) => x.toFixed(3)).join(' / ')})`,
        );
        // Strictly greater: FEATURE_SETS runs smallest first, so a tie keeps the smaller set.
        if (!best || o.mean > best.mean) best = { config, mean: o.mean };
      }
  if (!best) throw new Error('empty grid');
  const guarded: TenantLearnerConfig = { ...best.config, guardFolds: 5 };
  const g = objective(data, guarded);
  console.log(
    `stage 2, with the 5-fold guard: mean ${g.mean.toFixed(4)} (${g.perDomain.map((x) => x.toFixed(3)).join(' / ')})`,
  );
  if (g.mean > best.mean) best = { config: guarded, mean: g.mean };
  console.log(`chosen: ${JSON.stringify(best.config)} (mean ${best.mean.toFixed(4)})`);
  console.log(TABLE_HEAD.join('\n'));
  SEEN_TENANTS.forEach((t, i) => {
    for (const line of tableRows(t.name, domainCells(data[i] as TenantRows, best.config, SHUFFLES)))
      console.log(line);
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();
