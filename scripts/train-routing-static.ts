/**
 * Experiment (not shipped): an outcome model over the static MiniLM embedding
 * (test/eval/routing-static-embedding.ts: mean of all-MiniLM-L6-v2's word vectors,
 * unit length, plus log token count), scored by leave-one-domain-out (LODO) AUC only. It prints
 * figures and writes nothing.
 *
 *   npx tsx scripts/train-routing-static.ts <lm-sys/RouteLLM git dir>
 *
 * Domains: RouteLLM MMLU (training subjects; the dev and test subjects are not opened), FastChat's
 * Vicuna bench (vicuna-dev.jsonl), and the training files of scripts/build-routing-wide.ts
 * (BIG-Bench Hard, SVAMP, APPS, the DRAW-1K and HumanEval/MBPP training quarters). No test split,
 * no unseen domain. The recipe: one L2 logistic regression per domain, each standardised on its
 * own rows, summed; a held-out domain is ranked by the sum of the other domains' models, so what
 * transfers is ranking inside a domain, not the gap between base rates. Printed for the four
 * domains it was first chosen on (MMLU, Vicuna, DRAW-1K, code) and for all seven, beside the
 * shipped weights' AUC on the same rows (honest only where the shipped model never trained).
 * Deterministic: fixed order, full-batch Adam, no randomness.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { auc } from '../dataplane/src/pipeline/routing/auc.ts';
import { classifyDifficulty } from '../dataplane/src/pipeline/routing/classify.ts';
import { extractFeatures } from '../dataplane/src/pipeline/routing/features.ts';
import { STATIC_DIMENSIONS, staticEmbedding } from '../test/eval/routing-static-embedding.ts';
import { parseCsv } from './routing-data.ts';

const routeLlmDir = process.argv[2];
if (!routeLlmDir) throw new Error('usage: train-routing-static.ts <RouteLLM git dir>');
const routeGit = (...a: string[]): string =>
  execFileSync('git', ['--git-dir', routeLlmDir, ...a], { encoding: 'utf8', maxBuffer: 1 << 28 });
const ROUTE_COMMIT = '0b64fdafe049e596a3f5657c219329f24af24198';
const WEAK = 'mistralai/Mixtral-8x7B-Instruct-v0.1';

const DOMAINS = ['mmlu', 'vicuna', 'bbh', 'svamp', 'apps', 'draw', 'code'] as const;
type Domain = (typeof DOMAINS)[number];
const FIRST_FOUR: readonly Domain[] = ['mmlu', 'vicuna', 'draw', 'code'];

interface Row {
  text: string;
  weakFails: boolean;
}
const rowsOf = {} as Record<Domain, Row[]>;
rowsOf.mmlu = [];
let trainIndex = 0;
routeGit('ls-tree', '--name-only', ROUTE_COMMIT, 'routellm/evals/mmlu/responses/')
  .split('\n')
  .filter((f) => f.endsWith('.csv'))
  .sort()
  .forEach((file, i) => {
    // The same subject split as scripts/train-routing.ts; test and dev subjects are not opened.
    if (i % 4 === 3 || trainIndex++ % 8 === 1) return;
    const [header, ...csv] = parseCsv(routeGit('show', `${ROUTE_COMMIT}:${file}`));
    const wi = header?.indexOf(WEAK) ?? -1;
    if (wi < 0) throw new Error(`${file}: no ${WEAK} column`);
    for (const r of csv)
      if (r.length >= 3)
        rowsOf.mmlu.push({
          text: (r[0] as string).replace(/\nAnswer:\s*$/, ''),
          weakFails: r[wi] === 'False',
        });
  });
const FILES: Record<Exclude<Domain, 'mmlu'>, string> = {
  vicuna: 'vicuna-dev.jsonl',
  bbh: 'wide/bbh.jsonl',
  svamp: 'wide/svamp.jsonl',
  apps: 'wide/apps.jsonl',
  draw: 'wide/draw-train.jsonl',
  code: 'wide/code-train.jsonl',
};
for (const d of DOMAINS)
  if (d !== 'mmlu')
    rowsOf[d] = readFileSync(new URL(`../test/data/routing/outcomes/${FILES[d]}`, import.meta.url), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Row);

// --- Features: what serving would compute --------------------------------------------------------
interface Example {
  x: Float64Array;
  label: boolean;
}
const K = STATIC_DIMENSIONS + 1;
const toExample = (r: Row): Example => {
  // The instruction alone when a pasted body is data (the rules' own reading of the ask).
  const f = extractFeatures({ model: 'x', messages: [{ role: 'user', content: r.text }] });
  const e = staticEmbedding(f.dataTask ? (r.text.split('\n')[0] ?? r.text) : r.text);
  const x = new Float64Array(K);
  x.set(e.vector);
  x[STATIC_DIMENSIONS] = Math.log1p(e.tokens);
  return { x, label: r.weakFails };
};
const examples = Object.fromEntries(DOMAINS.map((d) => [d, rowsOf[d].map(toExample)])) as Record<
  Domain,
  Example[]
>;

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
 * Adam on the mean cross-entropy + L2 as scikit-learn's C (1/(C·n)), intercept free; then
 * standardised on its own rows (mean 0, unit spread) so domains add on one scale.
 * `tokensOnly` zeroes the embedding: what the token count alone does.
 */
function fitDomain(all: Example[], c: number, tokensOnly = false): DomainModel {
  const ex = tokensOnly
    ? all.map((e) => ({ ...e, x: e.x.map((v, k) => (k === STATIC_DIMENSIONS ? v : 0)) }))
    : all;
  const size = 1 + K;
  const theta = new Float64Array(size);
  const mom = new Float64Array(size);
  const vel = new Float64Array(size);
  const l2 = 1 / (c * ex.length);
  for (let step = 1; step <= 400; step++) {
    const g = new Float64Array(size);
    const w = theta.subarray(1);
    for (const e of ex) {
      const err = 1 / (1 + Math.exp(-((theta[0] as number) + dot(w, e.x)))) - (e.label ? 1 : 0);
      g[0] = (g[0] as number) + err;
      for (let k = 0; k < K; k++) g[1 + k] = (g[1 + k] as number) + err * (e.x[k] as number);
    }
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
  const z = ex.map((e) => (theta[0] as number) + dot(theta.subarray(1), e.x));
  const mean = z.reduce((s, v) => s + v, 0) / z.length;
  const sd = Math.sqrt(z.reduce((s, v) => s + (v - mean) ** 2, 0) / z.length) || 1;
  return { bias: ((theta[0] as number) - mean) / sd, w: theta.subarray(1).map((v) => v / sd) };
}
const aucOf = (scores: number[], ex: Example[]): number =>
  auc(
    scores,
    ex.map((e) => e.label),
  );
const lodo = (models: Record<Domain, DomainModel>, domains: readonly Domain[]): Record<string, number> =>
  Object.fromEntries(
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
const line = (name: string, per: Record<string, number>): void => {
  const v = Object.values(per);
  console.log(
    `${name}: ${Object.entries(per)
      .map(([d, a]) => `${d} ${a.toFixed(3)}`)
      .join(
        ', ',
      )}; mean ${(v.reduce((s, x) => s + x, 0) / v.length).toFixed(3)}, worst ${Math.min(...v).toFixed(3)}`,
  );
};

console.log(`rows: ${DOMAINS.map((d) => `${d} ${examples[d].length}`).join(', ')}`);
const shipped = Object.fromEntries(
  DOMAINS.map((d) => [
    d,
    aucOf(
      rowsOf[d].map(
        (r) => classifyDifficulty({ model: 'x', messages: [{ role: 'user', content: r.text }] }).weakFails,
      ),
      examples[d],
    ),
  ]),
);
line('shipped weights (mmlu, vicuna in-sample)', shipped);
for (const c of [0.003, 0.01, 0.03]) {
  const models = Object.fromEntries(DOMAINS.map((d) => [d, fitDomain(examples[d], c)])) as Record<
    Domain,
    DomainModel
  >;
  line(`static embedding + tokens, C=${c}, LODO over the first four`, lodo(models, FIRST_FOUR));
  line(`static embedding + tokens, C=${c}, LODO over all seven`, lodo(models, DOMAINS));
  // Trained on the first four only, as the candidate was: the other three are domains it never saw.
  const four = FIRST_FOUR.map((d) => models[d]);
  line(
    `static embedding + tokens, C=${c}, trained on the first four, on the other three`,
    Object.fromEntries(
      DOMAINS.filter((d) => !FIRST_FOUR.includes(d)).map((d) => [
        d,
        aucOf(
          examples[d].map((e) => four.reduce((s, m) => s + m.bias + dot(m.w, e.x), 0)),
          examples[d],
        ),
      ]),
    ),
  );
}
const tokens = Object.fromEntries(DOMAINS.map((d) => [d, fitDomain(examples[d], 0.003, true)])) as Record<
  Domain,
  DomainModel
>;
line('token count alone, C=0.003, LODO over all seven', lodo(tokens, DOMAINS));
