/**
 * Trains the routing outcome model (dataplane/src/pipeline/routing/outcome.ts): the chance that
 * a weak model fails a prompt a strong one handles, from per-prompt outcomes of public evals.
 *
 *   npx tsx scripts/train-routing.ts <lm-sys/RouteLLM git dir> <lm-sys/FastChat git dir>
 *
 * Sources (commits and licences land in test/data/routing/outcomes/MANIFEST.json):
 * - RouteLLM MMLU: whether Mixtral-8x7B (weak) answered each question right. Split by subject:
 *   every fourth subject (alphabetical) is the test split, every eighth of the rest the dev split.
 * - FastChat's Vicuna bench: 80 open-ended questions, GPT-4 reviews of Vicuna-13B against
 *   GPT-3.5-Turbo. Dev only: half of the model choice, so it is not made on MMLU alone.
 * - RouteLLM MT-bench first turns (weak rated below strong): test only, never used for any
 *   choice here. RouteLLM's GSM8K responses are not read (reserved). The unseen domains
 *   (Arena-Bench, scripts/build-routing-unseen.ts; DRAW-1K and HumanEval/MBPP,
 *   scripts/build-routing-domains.ts) are not read here either.
 *
 * The dev sets pick the feature set and regularization (mean of the two dev AUCs) and MMLU dev
 * calibrates the score (Platt scaling, so the probability reads as "Mixtral answers a knowledge
 * question wrongly"). Deterministic: fixed order, full-batch Adam, no randomness.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { auc } from '../dataplane/src/pipeline/routing/auc.ts';
import { extractFeatures } from '../dataplane/src/pipeline/routing/features.ts';
import {
  DENSE_NAMES,
  denseFeatures,
  hashedBuckets,
  HASH_BUCKETS,
} from '../dataplane/src/pipeline/routing/outcome-features.ts';
import { parseCsv } from './routing-data.ts';

const [routeLlmDir, fastchatDir] = process.argv.slice(2);
if (!routeLlmDir || !fastchatDir)
  throw new Error('usage: train-routing.ts <RouteLLM git dir> <FastChat git dir>');
const gitOf =
  (dir: string) =>
  (...args: string[]): string =>
    execFileSync(
      'git',
      ['--git-dir', dir.endsWith('.git') || dir.endsWith('repo') ? dir : `${dir}/.git`, ...args],
      {
        encoding: 'utf8',
        maxBuffer: 1 << 28,
      },
    );
const routeGit = gitOf(routeLlmDir);
const fastchatGit = gitOf(fastchatDir);
const routeCommit = routeGit('rev-parse', 'HEAD').trim();

const WEAK = 'mistralai/Mixtral-8x7B-Instruct-v0.1';
const STRONG = 'gpt-4-1106-preview';

type Source = 'mmlu' | 'vicuna' | 'mtbench';
type Split = 'train' | 'dev' | 'test';
interface Row {
  text: string;
  /** Probability-like target: 1 = the weak model fails. */
  y: number;
  /** The binary label the test files keep. */
  weakFails: boolean;
  source: Source;
  group: string;
  split: Split;
}

// --- RouteLLM MMLU -------------------------------------------------------------------------
const rows: Row[] = [];
const mmluFiles = routeGit('ls-tree', '--name-only', 'HEAD', 'routellm/evals/mmlu/responses/')
  .split('\n')
  .filter((f) => f.endsWith('.csv'))
  .sort();
let trainIndex = 0;
mmluFiles.forEach((file, i) => {
  const [header, ...csv] = parseCsv(routeGit('show', `HEAD:${file}`));
  const wi = header?.indexOf(WEAK) ?? -1;
  if (wi < 0) throw new Error(`${file}: no ${WEAK} column`);
  const subject = file.replace(/^.*mmlu_/, '').replace(/\.csv$/, '');
  const split: Split = i % 4 === 3 ? 'test' : trainIndex++ % 8 === 1 ? 'dev' : 'train';
  for (const r of csv) {
    if (r.length < 3) continue;
    const fails = r[wi] === 'False';
    rows.push({
      text: (r[0] as string).replace(/\nAnswer:\s*$/, ''),
      y: fails ? 1 : 0,
      weakFails: fails,
      source: 'mmlu',
      group: subject,
      split,
    });
  }
});

// --- RouteLLM MT-bench (test only) ------------------------------------------------------------
const questions = new Map<number, string>();
for (const l of routeGit('show', 'HEAD:routellm/evals/mt_bench/question.jsonl').split('\n').filter(Boolean)) {
  const q = JSON.parse(l) as { question_id: number; turns: string[] };
  questions.set(q.question_id, q.turns[0] as string);
}
const scores = new Map<string, number>();
for (const l of routeGit('show', 'HEAD:routellm/evals/mt_bench/judgements.jsonl')
  .split('\n')
  .filter(Boolean)) {
  const j = JSON.parse(l) as { question_id: number; model: string; score: number; turn: number };
  if (j.turn === 1) scores.set(`${j.question_id}/${j.model}`, j.score);
}
const mtBench: Row[] = [];
for (const [id, text] of questions) {
  const weak = scores.get(`${id}/${WEAK}`);
  const strong = scores.get(`${id}/${STRONG}`);
  if (weak === undefined || strong === undefined) continue;
  mtBench.push({
    text,
    y: weak < strong ? 1 : 0,
    weakFails: weak < strong,
    source: 'mtbench',
    group: 'mt_bench',
    split: 'test',
  });
}

// --- FastChat's Vicuna bench (dev only) ------------------------------------------------------
// 80 open-ended chat questions, GPT-4 reviews of Vicuna-13B against GPT-3.5-Turbo (1-10 each):
// the open-ended side of the dev choice, so regularization is not picked on MMLU alone.
const VICUNA_COMMIT = '00639c272a03725150c81b7422ae1714e6ffa3eb';
/** GPT-4 reviews of GPT-3.5-Turbo (first score) against Vicuna-13B and Vicuna-7B (second). */
const VICUNA_REVIEWS = [
  'fastchat/eval/table/review/vicuna-13b-20230322-new-hp-fp16/review_gpt35_vicuna-13b-20230322-new-hp-fp16.jsonl',
  'fastchat/eval/table/review/vicuna-7b-20230322-fp16/review_gpt35_vicuna-7b-20230322-fp16.jsonl',
];
// Per question: did each Vicuna score below GPT-3.5? The 13B verdict is the dev label, the
// share of the two the training target (two weak models give a steadier target than one).
const vicunaLost = new Map<number, boolean[]>();
for (const file of VICUNA_REVIEWS)
  for (const l of fastchatGit('show', `${VICUNA_COMMIT}:${file}`).split('\n').filter(Boolean)) {
    const r = JSON.parse(l) as { question_id: number; score: [number, number] };
    vicunaLost.set(r.question_id, [...(vicunaLost.get(r.question_id) ?? []), r.score[1] < r.score[0]]);
  }
// Two Vicuna questions reappear in MT-bench; they are left out so the test stays unseen.
const mtBenchKeys = new Set(mtBench.map((r) => r.text.toLowerCase().trim()));
const vicuna: Row[] = [];
let vicunaOverlap = 0;
for (const l of fastchatGit('show', `${VICUNA_COMMIT}:fastchat/eval/table/question.jsonl`)
  .split('\n')
  .filter(Boolean)) {
  const q = JSON.parse(l) as { question_id: number; text: string; category: string };
  const lost = vicunaLost.get(q.question_id);
  if (lost?.length !== VICUNA_REVIEWS.length) continue;
  if (mtBenchKeys.has(q.text.toLowerCase().trim())) {
    vicunaOverlap++;
    continue;
  }
  vicuna.push({
    text: q.text,
    y: lost.filter(Boolean).length / lost.length,
    weakFails: lost[0] === true,
    source: 'vicuna',
    group: q.category,
    split: 'dev',
  });
}

// --- Features and training ------------------------------------------------------------------
interface Example {
  dense: number[];
  buckets: number[];
  y: number;
  /** Vicuna rows carry their own intercept (another label, another base rate) and weight. */
  vicuna: boolean;
}
const toExample = (r: Row): Example => ({
  dense: denseFeatures(
    extractFeatures({ model: 'x', messages: [{ role: 'user', content: r.text }] }),
    r.text,
  ),
  buckets: hashedBuckets(r.text),
  y: r.y,
  vicuna: r.source === 'vicuna',
});
const D = DENSE_NAMES.length;

interface Params {
  l2Dense: number;
  /** L2 on the hashed n-grams; null leaves them out. */
  l2Hashed: number | null;
  /** Weight of one Vicuna row against one MMLU row (0: MMLU alone). */
  vicunaWeight: number;
}
interface Model {
  bias: number;
  vicunaOffset: number;
  dense: Float64Array;
  hashed: Float64Array;
}

/** The served logit: the MMLU intercept, never the Vicuna offset. */
function logit(m: Model, ex: Example, training = false): number {
  const scale = ex.buckets.length ? 1 / Math.sqrt(ex.buckets.length) : 0;
  let z = m.bias + (training && ex.vicuna ? m.vicunaOffset : 0);
  for (let i = 0; i < D; i++) z += (ex.dense[i] as number) * (m.dense[i] as number);
  for (const b of ex.buckets) z += scale * (m.hashed[b] as number);
  return z;
}

/** Full-batch Adam on weighted cross-entropy with L2; parameters a config leaves out stay 0. */
function fit(examples: Example[], p: Params, steps = 300): Model {
  const K = 2 + D + HASH_BUCKETS;
  const theta = new Float64Array(K);
  const mom = new Float64Array(K);
  const vel = new Float64Array(K);
  const weightOf = (ex: Example): number => (ex.vicuna ? p.vicunaWeight : 1);
  const total = examples.reduce((sum, ex) => sum + weightOf(ex), 0);
  const view = (): Model => ({
    bias: theta[0] as number,
    vicunaOffset: theta[1] as number,
    dense: theta.subarray(2, 2 + D),
    hashed: theta.subarray(2 + D),
  });
  const lr = 0.05;
  for (let step = 1; step <= steps; step++) {
    const g = new Float64Array(K);
    const m = view();
    for (const ex of examples) {
      const w = weightOf(ex);
      if (w === 0) continue;
      const scale = ex.buckets.length ? 1 / Math.sqrt(ex.buckets.length) : 0;
      const err = (1 / (1 + Math.exp(-logit(m, ex, true))) - ex.y) * w;
      g[0] = (g[0] as number) + err;
      if (ex.vicuna) g[1] = (g[1] as number) + err;
      for (let i = 0; i < D; i++) g[2 + i] = (g[2 + i] as number) + err * (ex.dense[i] as number);
      for (const b of ex.buckets) g[2 + D + b] = (g[2 + D + b] as number) + err * scale;
    }
    for (let k = 0; k < K; k++) {
      if (k >= 2 + D && p.l2Hashed === null) continue;
      const param = theta[k] as number;
      const l2 = k < 2 ? 0 : k < 2 + D ? p.l2Dense : (p.l2Hashed ?? 0);
      const grad = (g[k] as number) / total + l2 * param;
      mom[k] = 0.9 * (mom[k] as number) + 0.1 * grad;
      vel[k] = 0.999 * (vel[k] as number) + 0.001 * grad * grad;
      theta[k] =
        param -
        (lr * ((mom[k] as number) / (1 - 0.9 ** step))) /
          (Math.sqrt((vel[k] as number) / (1 - 0.999 ** step)) + 1e-8);
    }
  }
  const m = view();
  return { bias: m.bias, vicunaOffset: m.vicunaOffset, dense: m.dense.slice(), hashed: m.hashed.slice() };
}

const bySplit = (split: Split): Row[] => rows.filter((r) => r.split === split);
const trainRows = bySplit('train');
const trainEx = trainRows.map(toExample);
const devMmlu = bySplit('dev');
const devMmluEx = devMmlu.map(toExample);
const vicunaEx = vicuna.map(toExample);
const aucOf = (m: Model, ex: Example[], rs: Row[]): number =>
  auc(
    ex.map((e) => logit(m, e)),
    rs.map((r) => r.weakFails),
  );

/**
 * Dev score of a configuration: AUC on the MMLU dev subjects (model fitted on MMLU train and
 * all of Vicuna) and on Vicuna, each Vicuna category predicted by a model that never saw that
 * category (leave one category out, predictions pooled).
 */
function devScore(p: Params): { mmlu: number; vicuna: number; mean: number; model: Model } {
  const model = fit([...trainEx, ...vicunaEx], p);
  const mmlu = aucOf(model, devMmluEx, devMmlu);
  const pooled = new Array<number>(vicuna.length).fill(0);
  for (const category of new Set(vicuna.map((r) => r.group))) {
    const inFold = vicuna.map((r) => r.group === category);
    const m = p.vicunaWeight === 0 ? model : fit([...trainEx, ...vicunaEx.filter((_, i) => !inFold[i])], p);
    vicunaEx.forEach((ex, i) => {
      if (inFold[i]) pooled[i] = logit(m, ex);
    });
  }
  const vic = auc(
    pooled,
    vicuna.map((r) => r.weakFails),
  );
  return { mmlu, vicuna: vic, mean: (mmlu + vic) / 2, model };
}

const grid: Params[] = [];
for (const vicunaWeight of [0, 20, 60])
  for (const l2Hashed of [null, 3e-3, 1e-2]) grid.push({ l2Dense: 1e-3, l2Hashed, vicunaWeight });

let best: { p: Params; score: ReturnType<typeof devScore> } | undefined;
for (const p of grid) {
  const score = devScore(p);
  console.log(
    `vicuna x${p.vicunaWeight}, hashed ${p.l2Hashed ?? 'off'}: dev AUC MMLU ${score.mmlu.toFixed(3)}, ` +
      `Vicuna (unseen category) ${score.vicuna.toFixed(3)}, mean ${score.mean.toFixed(3)}`,
  );
  if (!best || score.mean > best.score.mean) best = { p, score };
}
if (!best) throw new Error('empty grid');
const chosen = best.p;
const model = best.score.model;

/** Platt scaling: a*z + b fitted by gradient descent on the log-loss. */
function platt(z: number[], y: boolean[]): { a: number; b: number } {
  let a = 1;
  let b = 0;
  for (let it = 0; it < 3000; it++) {
    let ga = 0;
    let gb = 0;
    z.forEach((zi, i) => {
      const err = 1 / (1 + Math.exp(-(a * zi + b))) - (y[i] ? 1 : 0);
      ga += err * zi;
      gb += err;
    });
    a -= (0.5 * ga) / z.length;
    b -= (0.5 * gb) / z.length;
  }
  return { a, b };
}
const cal = platt(
  devMmluEx.map((ex) => logit(model, ex)),
  devMmlu.map((r) => r.weakFails),
);

const r4 = (x: number): number => Math.round(x * 1e4) / 1e4;
const baseRate = trainRows.filter((r) => r.weakFails).length / trainRows.length;
const weightsFile = new URL('../dataplane/src/pipeline/routing/outcome-weights.ts', import.meta.url);
writeFileSync(
  weightsFile,
  `// Generated by scripts/train-routing.ts from lm-sys/RouteLLM@${routeCommit} (MMLU, ${trainRows.length} rows).\n` +
    `// Chosen on dev (MMLU dev subjects + FastChat Vicuna bench): ${JSON.stringify(chosen)}.\n` +
    `// Platt-calibrated on MMLU dev (a=${r4(cal.a)}, b=${r4(cal.b)}), folded into the weights. Do not edit.\n` +
    `// Dense order: ${DENSE_NAMES.join(', ')}.\n` +
    `import type { OutcomeWeights } from './outcome.ts';\n\n` +
    `export const OUTCOME_WEIGHTS: OutcomeWeights = {\n  bias: ${r4(cal.a * model.bias + cal.b)},\n  baseRate: ${r4(baseRate)},\n` +
    `  dense: [${[...model.dense].map((x) => r4(cal.a * x)).join(', ')}],\n` +
    `  hashed: [${[...model.hashed].map((x) => r4(cal.a * x)).join(', ')}],\n};\n`,
);

const dump = (rs: Row[]): string =>
  rs.map((r) => JSON.stringify({ group: r.group, weakFails: r.weakFails, text: r.text })).join('\n') + '\n';
const outDir = new URL('../test/data/routing/outcomes/', import.meta.url);
const mmluTest = bySplit('test');
writeFileSync(new URL('mmlu-heldout.jsonl', outDir), dump(mmluTest));
writeFileSync(new URL('mmlu-dev.jsonl', outDir), dump(devMmlu));
writeFileSync(new URL('vicuna-dev.jsonl', outDir), dump(vicuna));
writeFileSync(new URL('mt-bench.jsonl', outDir), dump(mtBench));
const fastchatCommit = fastchatGit('rev-parse', 'HEAD').trim();
// The evaluation-only domains (`unseen`: scripts/build-routing-unseen.ts, `evalOnly`:
// scripts/build-routing-domains.ts, `freshUnseen`: scripts/build-routing-fresh.ts) are
// recorded by their own scripts; a retrain keeps them.
const manifestUrl = new URL('MANIFEST.json', outDir);
const previous = existsSync(manifestUrl)
  ? (JSON.parse(readFileSync(manifestUrl, 'utf8')) as Record<string, unknown>)
  : {};
writeFileSync(
  manifestUrl,
  JSON.stringify(
    {
      sources: [
        {
          repo: 'github.com/lm-sys/RouteLLM',
          commit: routeCommit,
          licence: 'Apache-2.0',
          files: [
            'routellm/evals/mmlu/responses/*.csv',
            'routellm/evals/mt_bench/question.jsonl',
            'routellm/evals/mt_bench/judgements.jsonl',
          ],
          label: `weakFails: ${WEAK} wrong (MMLU) or rated below ${STRONG} on the first turn (MT-bench)`,
          notUsed: 'routellm/evals/gsm8k (reserved for independent evaluation)',
        },
        {
          repo: 'github.com/lm-sys/FastChat',
          commit: VICUNA_COMMIT,
          snapshot: fastchatCommit,
          licence: 'Apache-2.0',
          files: ['fastchat/eval/table/question.jsonl', ...VICUNA_REVIEWS],
          label:
            'weakFails: GPT-4 scored Vicuna-13B below GPT-3.5-Turbo; training target: share of Vicuna-13B and -7B scored below it',
          droppedAsMtBenchOverlap: vicunaOverlap,
        },
      ],
      triedAndDropped: {
        repo: 'github.com/tatsu-lab/alpaca_eval',
        commit: 'cd543a149df89434d8a54582c0151c0b945c3d20',
        licence: 'Apache-2.0',
        why:
          'AlpacaEval 2 preference of GPT-4-Turbo over ten weaker models measures answer richness, not failure: ' +
          'every configuration ranked it below chance on its dev split (AUC 0.38-0.48), so it was not used',
      },
      splits: {
        mmlu: 'by subject, alphabetical: every 4th test, every 8th of the rest dev, the rest train',
        vicuna: 'trained on with its own intercept; the weight chosen by leave-one-category-out AUC',
        mtBench: 'test only; never used for a choice',
      },
      rows: {
        train: trainRows.length,
        mmluDev: devMmlu.length,
        vicunaDev: vicuna.length,
        mmluTest: mmluTest.length,
        mtBench: mtBench.length,
      },
      chosen: {
        ...chosen,
        devAuc: { mmlu: r4(best.score.mmlu), vicunaLeaveCategoryOut: r4(best.score.vicuna) },
        platt: { a: r4(cal.a), b: r4(cal.b) },
      },
      heldOutSubjects: [...new Set(mmluTest.map((r) => r.group))],
      devSubjects: [...new Set(devMmlu.map((r) => r.group))],
      evalOnly: previous.evalOnly,
      unseen: previous.unseen,
      freshUnseen: previous.freshUnseen,
    },
    null,
    1,
  ) + '\n',
);
// Formatted like the rest of the tree, so a rerun reproduces the committed file byte for byte.
execFileSync('npx', ['prettier', '--write', fileURLToPath(weightsFile)], { stdio: 'ignore' });
console.log(`chose ${JSON.stringify(chosen)}; trained on ${trainRows.length} rows`);
// The test splits are scored by `npm run eval` only, so rerunning this never looks at them.
