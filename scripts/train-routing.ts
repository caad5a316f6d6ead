/**
 * Trains the routing outcome model (dataplane/src/pipeline/routing/outcome.ts): the chance that
 * a weak model fails a prompt a strong one handles, from per-prompt outcomes of public evals.
 *
 *   npx tsx scripts/train-routing.ts <lm-sys/RouteLLM git dir> <lm-sys/FastChat git dir> \
 *     <lab-v2/ChatGPT_MWP_eval git dir> <zaiyichen0411/MapCoder-Reproduction git dir>
 *
 * Sources (commits and licences land in test/data/routing/outcomes/MANIFEST.json):
 * - RouteLLM MMLU: whether Mixtral-8x7B (weak) answered each question right. Split by subject:
 *   every fourth subject (alphabetical) is the test split, every eighth of the rest the dev split.
 * - FastChat's Vicuna bench: 80 open-ended questions, GPT-4 reviews of Vicuna-13B against
 *   GPT-3.5-Turbo. Too small to split: trained on whole, scored only by models that never saw it.
 * - DRAW-1K algebra word problems (lab-v2/ChatGPT_MWP_eval, CC0): whether ChatGPT, showing its
 *   working, gave every answer of the problem. Every fourth problem is dev.
 * - Code (MapCoder-Reproduction, MIT): whether Qwen-Coder-Turbo, asked directly, passed the
 *   tests of each HumanEval and MBPP problem. Every fourth problem is dev.
 * - RouteLLM MT-bench first turns (weak rated below strong): test only. RouteLLM's GSM8K
 *   responses are not read (reserved). Arena-Bench (test/data/routing/outcomes/arena-bench.jsonl,
 *   scripts/build-routing-unseen.ts), the unseen domain, is not read here either.
 *
 * The configuration (one intercept per domain or one shared, domain weights, sign-invariant
 * dense features, hashed n-grams) is chosen on dev only, on the mean of three AUCs (see
 * devScore): held-out-domain, in-domain and pooled held-out-domain, because the target is a
 * domain nobody tuned on but the known domains must still rank. MMLU dev calibrates the score
 * (Platt scaling, so the probability reads as "Mixtral answers a knowledge question wrongly").
 * Deterministic: fixed order, full-batch Adam, no randomness.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
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

const [routeLlmDir, fastchatDir, drawDir, codeDir] = process.argv.slice(2);
if (!routeLlmDir || !fastchatDir || !drawDir || !codeDir)
  throw new Error(
    'usage: train-routing.ts <RouteLLM git dir> <FastChat git dir> <ChatGPT_MWP_eval git dir> <MapCoder-Reproduction git dir>',
  );
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
const drawGit = gitOf(drawDir);
const codeGit = gitOf(codeDir);
const routeCommit = routeGit('rev-parse', 'HEAD').trim();

const WEAK = 'mistralai/Mixtral-8x7B-Instruct-v0.1';
const STRONG = 'gpt-4-1106-preview';

/** Training domains, in intercept order (MMLU first: its intercept is the served one). */
const DOMAINS = ['mmlu', 'vicuna', 'draw', 'code'] as const;
type Domain = (typeof DOMAINS)[number];
type Source = Domain | 'mtbench';
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

// --- FastChat's Vicuna bench ------------------------------------------------------------------
// 80 open-ended chat questions, GPT-4 reviews of Vicuna-13B against GPT-3.5-Turbo (1-10 each):
// the open-ended side: MMLU alone cannot teach that free writing is easy for a weak model.
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

// --- DRAW-1K algebra word problems (lab-v2/ChatGPT_MWP_eval) -----------------------------------
// ChatGPT (Feb 2023, showing its working) on 1,000 algebra word problems. The label is strict:
// a problem fails unless every answer came back (a system with two unknowns half-solved is a
// failure for the user), so partial answers count as failures.
const DRAW_DATA = 'data_with_implementation/data';
const drawQuestions = JSON.parse(drawGit('show', `HEAD:${DRAW_DATA}/draw.json`)) as { sQuestion: string }[];
const drawResults = JSON.parse(drawGit('show', `HEAD:${DRAW_DATA}/chatgpt_plus_results_feb.json`)) as {
  question_No: number;
  result: string;
}[];
const SOLVED = new Set(['has all the answers', 'has all the answers when rounded']);
for (const r of drawResults) {
  const q = drawQuestions[r.question_No];
  if (!q) continue;
  const fails = !SOLVED.has(r.result.trim());
  rows.push({
    text: q.sQuestion,
    y: fails ? 1 : 0,
    weakFails: fails,
    source: 'draw',
    group: 'draw1k',
    split: r.question_No % 4 === 3 ? 'dev' : 'train',
  });
}

// --- Code: HumanEval and MBPP (MapCoder-Reproduction) --------------------------------------------
// Qwen-Coder-Turbo asked directly (no agent loop): did its one answer pass the problem's tests?
const CODE_RESULTS = [
  ['humaneval', 'results/HumanEval/QwenCoderTurbo-Direct-HumanEval-Python3-0.0-1-merged.jsonl'],
  ['mbpp', 'results/MBPP/QwenCoderTurbo-Direct-MBPP-Python3-0.0-1-merged.jsonl'],
] as const;
for (const [group, file] of CODE_RESULTS)
  codeGit('show', `HEAD:${file}`)
    .split('\n')
    .filter(Boolean)
    .forEach((l, i) => {
      const r = JSON.parse(l) as { prompt: string; is_solved: boolean | string };
      const fails = String(r.is_solved) !== 'True' && r.is_solved !== true;
      rows.push({
        text: r.prompt,
        y: fails ? 1 : 0,
        weakFails: fails,
        source: 'code',
        group,
        split: i % 4 === 3 ? 'dev' : 'train',
      });
    });

// --- Features and training ------------------------------------------------------------------
interface Example {
  dense: number[];
  buckets: number[];
  y: number;
  /** Index in DOMAINS: each domain has its own intercept (another label, another base rate). */
  domain: number;
}
const toExample = (r: Row): Example => ({
  dense: denseFeatures(
    extractFeatures({ model: 'x', messages: [{ role: 'user', content: r.text }] }),
    r.text,
  ),
  buckets: hashedBuckets(r.text),
  y: r.y,
  domain: Math.max(0, DOMAINS.indexOf(r.source as Domain)),
});
const D = DENSE_NAMES.length;
const ND = DOMAINS.length;

interface Params {
  l2Dense: number;
  /** L2 on the hashed n-grams; null leaves them out. */
  l2Hashed: number | null;
  /**
   * Total weight of each smaller domain as a share of MMLU's (0.5: each weighs half as much as
   * all of MMLU); MMLU rows weigh 1.
   */
  domainShare: number;
  /**
   * Keep only dense features whose direction agrees across the training domains (univariate
   * AUC on each domain's training rows on the same side of 0.5), and hold their weights to
   * that sign: a cue that means "harder" in one domain and "easier" in another says nothing
   * about a domain nobody trained on.
   */
  invariant: boolean;
  /**
   * One intercept for every domain instead of one each: the model may then learn that a kind of
   * ask (a word problem, a function to write) fails more often than another, which is what
   * ranks a mixed set of prompts, at the price of mixing labels from different model pairs.
   */
  sharedIntercept: boolean;
}
interface Model {
  /** Intercepts, one per domain (only the first is used when shared). */
  bias: Float64Array;
  /** The intercept a prompt from an unknown domain gets: MMLU's, or the mean of those trained. */
  served: number;
  dense: Float64Array;
  hashed: Float64Array;
}

/** The logit under a domain's intercept (without one: the served intercept). */
function logit(m: Model, ex: Example, domain?: number): number {
  const scale = ex.buckets.length ? 1 / Math.sqrt(ex.buckets.length) : 0;
  let z = domain === undefined ? m.served : (m.bias[domain] as number);
  for (let i = 0; i < D; i++) z += (ex.dense[i] as number) * (m.dense[i] as number);
  for (const b of ex.buckets) z += scale * (m.hashed[b] as number);
  return z;
}

/** Per dense feature: +1 or -1 if every training domain agrees on its direction, else 0. */
function agreedSigns(examples: Example[]): number[] {
  const signs = new Array<number>(D).fill(0);
  for (let i = 0; i < D; i++) {
    let dir = 0;
    let conflict = false;
    for (let d = 0; d < ND; d++) {
      const own = examples.filter((ex) => ex.domain === d);
      if (own.length < 20) continue;
      const a = auc(
        own.map((ex) => ex.dense[i] as number),
        own.map((ex) => ex.y >= 0.5),
      );
      // Under two points from chance (or a constant feature) is no vote either way.
      if (Number.isNaN(a) || Math.abs(a - 0.5) < 0.02) continue;
      const s = a > 0.5 ? 1 : -1;
      if (dir !== 0 && s !== dir) conflict = true;
      dir = s;
    }
    signs[i] = conflict ? 0 : dir;
  }
  return signs;
}

/** Full-batch Adam on weighted cross-entropy with L2; parameters a config leaves out stay 0. */
function fit(examples: Example[], p: Params, steps = 300): Model {
  const signs = p.invariant ? agreedSigns(examples) : null;
  const K = ND + D + HASH_BUCKETS;
  const theta = new Float64Array(K);
  const mom = new Float64Array(K);
  const vel = new Float64Array(K);
  const count = new Array<number>(ND).fill(0);
  for (const ex of examples) count[ex.domain] = (count[ex.domain] as number) + 1;
  const rowWeight = count.map((n, d) =>
    d === 0 || n === 0 ? 1 : Math.max(1, (p.domainShare * (count[0] as number)) / n),
  );
  const total = examples.reduce((sum, ex) => sum + (rowWeight[ex.domain] as number), 0);
  const interceptOf = (ex: Example): number => (p.sharedIntercept ? 0 : ex.domain);
  const trained = count.map((n, d) => (p.sharedIntercept ? d === 0 : n > 0));
  const view = (): Model => ({
    served: 0,
    bias: theta.subarray(0, ND),
    dense: theta.subarray(ND, ND + D),
    hashed: theta.subarray(ND + D),
  });
  const lr = 0.05;
  for (let step = 1; step <= steps; step++) {
    const g = new Float64Array(K);
    const m = view();
    for (const ex of examples) {
      const w = rowWeight[ex.domain] as number;
      const scale = ex.buckets.length ? 1 / Math.sqrt(ex.buckets.length) : 0;
      const err = (1 / (1 + Math.exp(-logit(m, ex, interceptOf(ex)))) - ex.y) * w;
      g[interceptOf(ex)] = (g[interceptOf(ex)] as number) + err;
      for (let i = 0; i < D; i++) g[ND + i] = (g[ND + i] as number) + err * (ex.dense[i] as number);
      for (const b of ex.buckets) g[ND + D + b] = (g[ND + D + b] as number) + err * scale;
    }
    for (let k = 0; k < K; k++) {
      if (k >= ND + D && p.l2Hashed === null) continue;
      if (k < ND && !trained[k]) continue;
      const param = theta[k] as number;
      const l2 = k < ND ? 0 : k < ND + D ? p.l2Dense : (p.l2Hashed ?? 0);
      const grad = (g[k] as number) / total + l2 * param;
      mom[k] = 0.9 * (mom[k] as number) + 0.1 * grad;
      vel[k] = 0.999 * (vel[k] as number) + 0.001 * grad * grad;
      theta[k] =
        param -
        (lr * ((mom[k] as number) / (1 - 0.9 ** step))) /
          (Math.sqrt((vel[k] as number) / (1 - 0.999 ** step)) + 1e-8);
      // Projected step: an invariant feature keeps its agreed sign, a disputed one stays 0.
      if (signs && k >= ND && k < ND + D) {
        const s = signs[k - ND] as number;
        if (s === 0 || (theta[k] as number) * s < 0) theta[k] = 0;
      }
    }
  }
  const m = view();
  const own = [...m.bias].filter((_, d) => trained[d]);
  return {
    bias: m.bias.slice(),
    served: trained[0] ? (m.bias[0] as number) : own.reduce((a, b) => a + b, 0) / own.length,
    dense: m.dense.slice(),
    hashed: m.hashed.slice(),
  };
}

const bySplit = (split: Split, source?: Source): Row[] =>
  rows.filter((r) => r.split === split && (!source || r.source === source));
// Vicuna's 78 questions are too few to split: trained on whole, scored only when held out.
const trainRows = [...bySplit('train'), ...vicuna];
const trainEx = trainRows.map(toExample);
const devOf: Record<Domain, Row[]> = {
  mmlu: bySplit('dev', 'mmlu'),
  vicuna,
  draw: bySplit('dev', 'draw'),
  code: bySplit('dev', 'code'),
};
const devEx = Object.fromEntries(DOMAINS.map((d) => [d, devOf[d].map(toExample)])) as Record<
  Domain,
  Example[]
>;
const devMmlu = devOf.mmlu;
const devMmluEx = devEx.mmlu;
const aucOf = (m: Model, ex: Example[], rs: Row[]): number =>
  auc(
    ex.map((e) => logit(m, e)),
    rs.map((r) => r.weakFails),
  );

/**
 * Dev score of a configuration, the mean of three figures:
 * - held out: for each domain, the AUC on its dev rows of a model fitted on the training rows
 *   of the other domains only (leave one domain out), averaged over the domains;
 * - in domain: the same dev rows scored by the model fitted on every domain's training rows
 *   (Vicuna, trained on whole, counts its held-out figure here too);
 * - pooled: all dev rows in one ranking, each scored by the model that never saw its domain,
 *   under that model's served intercept, as a set of mixed prompts from unknown domains is.
 */
function devScore(p: Params): {
  heldOut: Record<Domain, number>;
  inDomain: Record<Domain, number>;
  pooled: number;
  mean: number;
  model: Model;
} {
  const model = fit(trainEx, p);
  const heldOut = {} as Record<Domain, number>;
  const inDomain = {} as Record<Domain, number>;
  const pooledScores: number[] = [];
  const pooledLabels: boolean[] = [];
  DOMAINS.forEach((d, di) => {
    const m = fit(
      trainEx.filter((ex) => ex.domain !== di),
      p,
    );
    heldOut[d] = aucOf(m, devEx[d], devOf[d]);
    // Vicuna is trained on whole, so its only honest figure is the held-out one.
    inDomain[d] = d === 'vicuna' ? heldOut[d] : aucOf(model, devEx[d], devOf[d]);
    devEx[d].forEach((ex, i) => {
      pooledScores.push(logit(m, ex));
      pooledLabels.push(devOf[d][i]?.weakFails === true);
    });
  });
  const avg = (r: Record<Domain, number>): number => DOMAINS.reduce((s, d) => s + r[d], 0) / ND;
  const pooled = auc(pooledScores, pooledLabels);
  return { heldOut, inDomain, pooled, mean: (avg(heldOut) + avg(inDomain) + pooled) / 3, model };
}

const grid: Params[] = [];
for (const sharedIntercept of [false, true])
  for (const invariant of [false, true])
    for (const domainShare of [0.1, 0.3, 1])
      for (const l2Hashed of [null, 1e-2])
        grid.push({ l2Dense: 1e-3, l2Hashed, domainShare, invariant, sharedIntercept });

const fmt = (r: Record<Domain, number>): string => DOMAINS.map((d) => `${d} ${r[d].toFixed(3)}`).join(', ');
let best: { p: Params; score: ReturnType<typeof devScore> } | undefined;
for (const p of grid) {
  const score = devScore(p);
  console.log(
    `${p.sharedIntercept ? 'shared' : 'own'} intercepts, ${p.invariant ? 'invariant' : 'all'} dense, domain share ${p.domainShare}, hashed ${p.l2Hashed ?? 'off'}: held-out-domain dev AUC ${fmt(score.heldOut)}; ` +
      `in-domain ${fmt(score.inDomain)}; pooled held-out ${score.pooled.toFixed(3)}; score ${score.mean.toFixed(3)}`,
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
  `// Generated by scripts/train-routing.ts (MMLU, Vicuna bench, DRAW-1K, HumanEval/MBPP: ${trainRows.length} rows).\n` +
    `// Chosen on dev AUC (held-out-domain, in-domain, pooled): ${JSON.stringify(chosen)}.\n` +
    `// Platt-calibrated on MMLU dev (a=${r4(cal.a)}, b=${r4(cal.b)}), folded into the weights. Do not edit.\n` +
    `// Dense order: ${DENSE_NAMES.join(', ')}.\n` +
    `import type { OutcomeWeights } from './outcome.ts';\n\n` +
    `export const OUTCOME_WEIGHTS: OutcomeWeights = {\n  bias: ${r4(cal.a * model.served + cal.b)},\n  baseRate: ${r4(baseRate)},\n` +
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
writeFileSync(new URL('draw-dev.jsonl', outDir), dump(devOf.draw));
writeFileSync(new URL('code-dev.jsonl', outDir), dump(devOf.code));
const manifestUrl = new URL('MANIFEST.json', outDir);
// The unseen split's record is written by scripts/build-routing-unseen.ts; keep it.
const { unseen } = JSON.parse(readFileSync(manifestUrl, 'utf8')) as { unseen?: unknown };
const headOf = (git: (...args: string[]) => string): string => git('rev-parse', 'HEAD').trim();
writeFileSync(new URL('mt-bench.jsonl', outDir), dump(mtBench));
const fastchatCommit = headOf(fastchatGit);
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
        {
          repo: 'github.com/lab-v2/ChatGPT_MWP_eval',
          commit: headOf(drawGit),
          licence: 'CC0-1.0',
          files: [`${DRAW_DATA}/draw.json`, `${DRAW_DATA}/chatgpt_plus_results_feb.json`],
          label:
            'weakFails: ChatGPT (Feb 2023, with working) did not return every answer of a DRAW-1K algebra word problem (partial answers fail)',
        },
        {
          repo: 'github.com/zaiyichen0411/MapCoder-Reproduction',
          commit: headOf(codeGit),
          licence: 'MIT',
          files: CODE_RESULTS.map(([, f]) => f),
          label: 'weakFails: Qwen-Coder-Turbo, asked directly, failed the HumanEval / MBPP problem tests',
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
        vicuna: 'trained on whole (too small to split); scored only by models that never saw it',
        draw: 'every 4th problem dev, the rest train',
        code: 'every 4th problem of each of HumanEval and MBPP dev, the rest train',
        choice:
          'each domain has its own intercept; configuration chosen on the mean leave-one-domain-out dev AUC',
        mtBench: 'test only; never used for a choice',
        arenaBench: 'test only, the unseen domain (see unseen); never read by this script',
      },
      rows: {
        train: trainRows.length,
        mmluDev: devMmlu.length,
        vicunaDev: vicuna.length,
        drawDev: devOf.draw.length,
        codeDev: devOf.code.length,
        mmluTest: mmluTest.length,
        mtBench: mtBench.length,
      },
      chosen: {
        ...chosen,
        devAucHeldOutDomain: Object.fromEntries(DOMAINS.map((d) => [d, r4(best.score.heldOut[d])])),
        devAucPooledHeldOut: r4(best.score.pooled),
        devScore: r4(best.score.mean),
        devAucInDomain: Object.fromEntries(DOMAINS.map((d) => [d, r4(best.score.inDomain[d])])),
        platt: { a: r4(cal.a), b: r4(cal.b) },
      },
      heldOutSubjects: [...new Set(mmluTest.map((r) => r.group))],
      devSubjects: [...new Set(devMmlu.map((r) => r.group))],
      unseen,
    },
    null,
    1,
  ) + '\n',
);
// Formatted like the rest of the tree, so a rerun reproduces the committed file byte for byte.
execFileSync('npx', ['prettier', '--write', fileURLToPath(weightsFile)], { stdio: 'ignore' });
console.log(`chose ${JSON.stringify(chosen)}; trained on ${trainRows.length} rows`);
// Test splits are scored by `npm run eval` only, so trying configurations here never looks at them.
