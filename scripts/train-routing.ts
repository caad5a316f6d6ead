/**
 * Trains the routing outcome model (dataplane/src/pipeline/routing/outcome.ts): the chance that
 * a weak model fails a prompt a strong one handles, from per-prompt outcomes of public evals.
 *
 *   npx tsx scripts/train-routing.ts <lm-sys/RouteLLM git dir> <lm-sys/FastChat git dir>
 *
 * Four seen domains (commits and licences in test/data/routing/outcomes/MANIFEST.json):
 * - RouteLLM MMLU: whether Mixtral-8x7B (weak) answered each question right. Split by subject:
 *   every fourth subject (alphabetical) is the test split, every eighth of the rest the dev
 *   split (Platt calibration only), the rest trains.
 * - FastChat's Vicuna bench: 80 open-ended questions, GPT-4 reviews of Vicuna-13B/-7B against
 *   GPT-3.5-Turbo (target: the share of the two scored below it).
 * - DRAW-1K word problems and HumanEval/MBPP code (committed outcome files, built by
 *   scripts/build-routing-domains.ts): three quarters of each; the fourth quarter is kept out.
 * RouteLLM's MT-bench first turns are written out as a test split, never used here; its GSM8K
 * responses are not read; the unseen Arena-Bench split is not read.
 *
 * Features: the static MiniLM embedding of the prompt (mean of word vectors, unit length) and
 * its log token count (routing/static-embedding.ts). One L2 logistic regression per domain
 * (ranking inside a domain, not the gap between domains' base rates, which is what a new
 * domain cannot reuse), each standardised on its own rows and summed. The regularisation and
 * the recipe are chosen ONLY by leave-one-domain-out AUC: each domain is scored by the sum of
 * the other three domains' models. The old recipe (rule features + hashed n-grams, one pooled
 * domain-balanced model) is scored on the same folds for comparison. MMLU dev calibrates the
 * sum (Platt). Deterministic: fixed order, full-batch Adam, no randomness.
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
import { STATIC_DIMENSIONS } from '../dataplane/src/pipeline/routing/static-embedding.ts';
import { staticEmbedding } from '../dataplane/src/pipeline/routing/static-embedding.ts';
import { parseCsv, trainingQuarters, type OutcomeFileRow } from './routing-data.ts';

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

type Source = 'mmlu' | 'vicuna' | 'mtbench' | 'draw' | 'code';
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

// --- DRAW-1K and code: three quarters of each committed outcome file ----------------------------
const readOutcomeFile = (name: string): OutcomeFileRow[] =>
  readFileSync(new URL(`../test/data/routing/outcomes/${name}`, import.meta.url), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as OutcomeFileRow);
// Named by variable, not quoted with the loader: these two (and no other outcome file) are
// read, through trainingQuarters only (test/eval/routing-data.test.ts checks both).
const QUARTERED = { draw: 'draw', code: 'code' } as const;
const quartered = (domain: keyof typeof QUARTERED): Row[] =>
  trainingQuarters(readOutcomeFile(`${QUARTERED[domain]}.jsonl`)).map((r) => ({
    text: r.text,
    y: r.weakFails ? 1 : 0,
    weakFails: r.weakFails,
    source: domain,
    group: r.group,
    split: 'train',
  }));

// --- Features -----------------------------------------------------------------------------
const DOMAINS = ['mmlu', 'vicuna', 'draw', 'code'] as const;
type Domain = (typeof DOMAINS)[number];
const bySplit = (split: Split): Row[] => rows.filter((r) => r.split === split);
const trainRows = bySplit('train');
const devMmlu = bySplit('dev');
const rowsOf: Record<Domain, Row[]> = {
  mmlu: trainRows,
  vicuna,
  draw: quartered('draw'),
  code: quartered('code'),
};

/** One example: static embedding + log token count (what serving computes), rule features. */
interface Example {
  x: Float64Array;
  /** The old recipe's inputs, for the comparison only. */
  dense: number[];
  buckets: number[];
  y: number;
  label: boolean;
}
const toExample = (r: Row): Example => {
  const features = extractFeatures({ model: 'x', messages: [{ role: 'user', content: r.text }] });
  // The text serving embeds (classify.ts): the instruction alone when a pasted body is data.
  const e = staticEmbedding(features.askText);
  const x = new Float64Array(STATIC_DIMENSIONS + 1);
  x.set(e.vector);
  x[STATIC_DIMENSIONS] = Math.log1p(e.tokens);
  return {
    x,
    dense: denseFeatures(features, r.text),
    buckets: hashedBuckets(r.text),
    y: r.y,
    label: r.weakFails,
  };
};
const examples = Object.fromEntries(DOMAINS.map((d) => [d, rowsOf[d].map(toExample)])) as Record<
  Domain,
  Example[]
>;
const K = STATIC_DIMENSIONS + 1;

/** Adam on the mean cross-entropy (soft targets) + l2/2·|w|²; the intercept is not penalised. */
function adam(
  n: number,
  size: number,
  grad: (theta: Float64Array, g: Float64Array) => void,
  l2: (k: number) => number,
  steps: number,
): Float64Array {
  const theta = new Float64Array(size);
  const mom = new Float64Array(size);
  const vel = new Float64Array(size);
  const lr = 0.05;
  for (let step = 1; step <= steps; step++) {
    const g = new Float64Array(size);
    grad(theta, g);
    for (let k = 0; k < size; k++) {
      const gk = (g[k] as number) / n + l2(k) * (theta[k] as number);
      mom[k] = 0.9 * (mom[k] as number) + 0.1 * gk;
      vel[k] = 0.999 * (vel[k] as number) + 0.001 * gk * gk;
      theta[k] =
        (theta[k] as number) -
        (lr * ((mom[k] as number) / (1 - 0.9 ** step))) /
          (Math.sqrt((vel[k] as number) / (1 - 0.999 ** step)) + 1e-8);
    }
  }
  return theta;
}

/** A domain's model: intercept at 0, weights 1..K, standardised so domains add on one scale. */
interface DomainModel {
  bias: number;
  w: Float64Array;
}
const dot = (w: Float64Array, x: Float64Array): number => {
  let z = 0;
  for (let k = 0; k < x.length; k++) z += (w[k] as number) * (x[k] as number);
  return z;
};

/**
 * L2 as scikit-learn's C: 1/(C·n) on the mean loss, so small domains are held closer to 0.
 * `tokensOnly` zeroes the embedding (the ablation that shows what the embedding adds).
 */
function fitDomain(all: Example[], c: number, tokensOnly = false): DomainModel {
  const ex = tokensOnly
    ? all.map((e) => ({ ...e, x: e.x.map((v, k) => (k === STATIC_DIMENSIONS ? v : 0)) }))
    : all;
  const theta = adam(
    ex.length,
    1 + K,
    (t, g) => {
      const w = t.subarray(1);
      for (const e of ex) {
        const err = 1 / (1 + Math.exp(-((t[0] as number) + dot(w, e.x)))) - e.y;
        g[0] = (g[0] as number) + err;
        for (let k = 0; k < K; k++) g[1 + k] = (g[1 + k] as number) + err * (e.x[k] as number);
      }
    },
    (k) => (k === 0 ? 0 : 1 / (c * ex.length)),
    400,
  );
  // Standardised on its own rows: mean 0, unit spread of the logit.
  const z = ex.map((e) => (theta[0] as number) + dot(theta.subarray(1), e.x));
  const mean = z.reduce((s, v) => s + v, 0) / z.length;
  const sd = Math.sqrt(z.reduce((s, v) => s + (v - mean) ** 2, 0) / z.length) || 1;
  return { bias: ((theta[0] as number) - mean) / sd, w: theta.subarray(1).map((v) => v / sd) };
}
const sumModels = (ms: DomainModel[]): DomainModel => ({
  bias: ms.reduce((s, m) => s + m.bias, 0),
  w: ms.reduce((acc, m) => acc.map((v, k) => v + (m.w[k] as number)), new Float64Array(K)),
});
const aucOn = (m: DomainModel, ex: Example[]): number =>
  auc(
    ex.map((e) => m.bias + dot(m.w, e.x)),
    ex.map((e) => e.label),
  );

type Lodo = Record<Domain, number> & { mean: number; worst: number };
const summarise = (per: Record<Domain, number>): Lodo => {
  const v = DOMAINS.map((d) => per[d]);
  return { ...per, mean: v.reduce((s, x) => s + x, 0) / v.length, worst: Math.min(...v) };
};
const show = (name: string, l: Lodo): void =>
  console.log(
    `${name}: leave-one-domain-out AUC ${DOMAINS.map((d) => `${d} ${l[d].toFixed(3)}`).join(', ')}; ` +
      `mean ${l.mean.toFixed(3)}, worst ${l.worst.toFixed(3)}`,
  );

// --- The old recipe on the same folds (comparison only) -------------------------------------------
// Rule features + hashed n-grams, one model pooled over the training domains, each domain
// weighing the same in total, L2 as shipped (dense 1e-3, hashed 1e-2).
function oldRecipeLodo(): Lodo {
  const D = DENSE_NAMES.length;
  const per = {} as Record<Domain, number>;
  for (const held of DOMAINS) {
    const train = DOMAINS.filter((d) => d !== held).flatMap((d) =>
      examples[d].map((e) => ({ e, w: 1 / examples[d].length })),
    );
    const total = train.reduce((s, t) => s + t.w, 0);
    const logitOf = (t: Float64Array, e: Example): number => {
      const scale = e.buckets.length ? 1 / Math.sqrt(e.buckets.length) : 0;
      let z = t[0] as number;
      for (let i = 0; i < D; i++) z += (e.dense[i] as number) * (t[1 + i] as number);
      for (const b of e.buckets) z += scale * (t[1 + D + b] as number);
      return z;
    };
    const theta = adam(
      total,
      1 + D + HASH_BUCKETS,
      (t, g) => {
        for (const { e, w } of train) {
          const err = (1 / (1 + Math.exp(-logitOf(t, e))) - e.y) * w;
          const scale = e.buckets.length ? 1 / Math.sqrt(e.buckets.length) : 0;
          g[0] = (g[0] as number) + err;
          for (let i = 0; i < D; i++) g[1 + i] = (g[1 + i] as number) + err * (e.dense[i] as number);
          for (const b of e.buckets) g[1 + D + b] = (g[1 + D + b] as number) + err * scale;
        }
      },
      (k) => (k === 0 ? 0 : k <= D ? 1e-3 : 1e-2),
      300,
    );
    per[held] = auc(
      examples[held].map((e) => logitOf(theta, e)),
      examples[held].map((e) => e.label),
    );
  }
  return summarise(per);
}
const oldLodo = oldRecipeLodo();
show('old recipe (rule features + hashed n-grams, pooled)', oldLodo);

// --- The new recipe: per-domain models, chosen by leave-one-domain-out AUC ----------------------
interface Candidate {
  c: number;
  lodo: Lodo;
  models: Record<Domain, DomainModel>;
}
let best: Candidate | undefined;
for (const c of [0.003, 0.01, 0.03, 0.1]) {
  const models = Object.fromEntries(DOMAINS.map((d) => [d, fitDomain(examples[d], c)])) as Record<
    Domain,
    DomainModel
  >;
  const per = Object.fromEntries(
    DOMAINS.map((held) => [
      held,
      aucOn(sumModels(DOMAINS.filter((d) => d !== held).map((d) => models[d])), examples[held]),
    ]),
  ) as Record<Domain, number>;
  const lodo = summarise(per);
  show(`static embedding + token count, per-domain models summed, C=${c}`, lodo);
  // Mean first; the worst domain breaks a tie of under half a point.
  if (
    !best ||
    lodo.mean > best.lodo.mean + 0.005 ||
    (lodo.mean > best.lodo.mean - 0.005 && lodo.worst > best.lodo.worst)
  )
    best = { c, lodo, models };
}
if (!best) throw new Error('empty grid');
{
  const models = Object.fromEntries(DOMAINS.map((d) => [d, fitDomain(examples[d], best.c, true)])) as Record<
    Domain,
    DomainModel
  >;
  show(
    `token count alone, per-domain models summed, C=${best.c}`,
    summarise(
      Object.fromEntries(
        DOMAINS.map((held) => [
          held,
          aucOn(sumModels(DOMAINS.filter((d) => d !== held).map((d) => models[d])), examples[held]),
        ]),
      ) as Record<Domain, number>,
    ),
  );
}
const chosen = { perDomainC: best.c };
const model = sumModels(DOMAINS.map((d) => best.models[d]));
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
const devMmluEx = devMmlu.map(toExample);
const cal = platt(
  devMmluEx.map((e) => model.bias + dot(model.w, e.x)),
  devMmlu.map((r) => r.weakFails),
);

const r4 = (x: number): number => Math.round(x * 1e4) / 1e4;
const baseRate = trainRows.filter((r) => r.weakFails).length / trainRows.length;
const weightsFile = new URL('../dataplane/src/pipeline/routing/outcome-weights.ts', import.meta.url);
const lodoText = (l: Lodo): string =>
  `${DOMAINS.map((d) => `${d} ${l[d].toFixed(3)}`).join(', ')}; mean ${l.mean.toFixed(3)}, worst ${l.worst.toFixed(3)}`;
writeFileSync(
  weightsFile,
  `// Generated by scripts/train-routing.ts from lm-sys/RouteLLM@${routeCommit} (MMLU, ${trainRows.length} rows),\n` +
    `// the Vicuna bench (${vicuna.length}), DRAW-1K (${rowsOf.draw.length}) and HumanEval/MBPP (${rowsOf.code.length}): one model per domain, summed.\n` +
    `// Chosen by leave-one-domain-out AUC: ${JSON.stringify(chosen)} (${lodoText(best.lodo)}).\n` +
    `// Platt-calibrated on MMLU dev (a=${r4(cal.a)}, b=${r4(cal.b)}), folded into the weights. Do not edit.\n` +
    `import type { OutcomeWeights } from './outcome.ts';\n\n` +
    `export const OUTCOME_WEIGHTS: OutcomeWeights = {\n  bias: ${r4(cal.a * model.bias + cal.b)},\n  baseRate: ${r4(baseRate)},\n` +
    `  logTokens: ${r4(cal.a * (model.w[STATIC_DIMENSIONS] as number))},\n` +
    `  embedding: [${[...model.w.subarray(0, STATIC_DIMENSIONS)].map((x) => r4(cal.a * x)).join(', ')}],\n};\n`,
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
        mmlu: 'by subject, alphabetical: every 4th test, every 8th of the rest dev (calibration), the rest train',
        vicuna: 'trained on whole (a domain of the leave-one-domain-out choice)',
        drawAndCode:
          'three quarters trained on (row index within its group % 4 != 3; DRAW-1K: question_No % 4 != 3); the fourth quarter is kept for evaluation',
        mtBench: 'test only; never used for a choice',
      },
      rows: {
        train: trainRows.length,
        drawTrain: rowsOf.draw.length,
        codeTrain: rowsOf.code.length,
        mmluDev: devMmlu.length,
        vicunaDev: vicuna.length,
        mmluTest: mmluTest.length,
        mtBench: mtBench.length,
      },
      chosen: {
        ...chosen,
        leaveOneDomainOutAuc: Object.fromEntries(
          [...DOMAINS, 'mean', 'worst'].map((k) => [k, r4(best.lodo[k as keyof Lodo])]),
        ),
        oldRecipeLeaveOneDomainOutAuc: Object.fromEntries(
          [...DOMAINS, 'mean', 'worst'].map((k) => [k, r4(oldLodo[k as keyof Lodo])]),
        ),
        platt: { a: r4(cal.a), b: r4(cal.b) },
      },
      heldOutSubjects: [...new Set(mmluTest.map((r) => r.group))],
      devSubjects: [...new Set(devMmlu.map((r) => r.group))],
      // Built by scripts/build-routing-domains.ts as evaluation-only sets; three quarters of
      // each now train, so their `use` says so.
      evalOnly: (previous.evalOnly as { file: string }[] | undefined)?.map((e) => ({
        ...e,
        use: 'three quarters trained on (splits.drawAndCode); the kept quarter is evaluated, less rows whose text is also in the trained quarters',
      })),
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
