/**
 * Trains the routing outcome model (dataplane/src/pipeline/routing/outcome.ts) on RouteLLM's
 * MMLU outcomes: per prompt, whether Mixtral-8x7B (weak) and GPT-4 (strong) answered right.
 * `npx tsx scripts/train-routing.ts <RouteLLM checkout>` (lm-sys/RouteLLM, Apache-2.0, commit
 * in test/data/routing/outcomes/MANIFEST.json). Deterministic (fixed order, full-batch Adam).
 *
 * Split by subject: every fourth MMLU subject (alphabetical) is held out and never seen while
 * training; MT-bench (another domain: open-ended, judged 1-10) is held out entirely. Both test
 * sets are written to test/data/routing/outcomes/ for `npm run eval`. RouteLLM's GSM8K
 * responses are not read (reserved for independent evaluation).
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { extractFeatures } from '../dataplane/src/pipeline/routing/features.ts';
import {
  DENSE_NAMES,
  denseFeatures,
  hashedBuckets,
  HASH_BUCKETS,
} from '../dataplane/src/pipeline/routing/outcome-features.ts';

const repo = process.argv[2];
if (!repo) throw new Error('usage: train-routing.ts <RouteLLM checkout or bare repo>');
const git = (...args: string[]): string =>
  execFileSync(
    'git',
    ['--git-dir', repo.endsWith('.git') || repo.endsWith('repo') ? repo : `${repo}/.git`, ...args],
    {
      encoding: 'utf8',
      maxBuffer: 1 << 28,
    },
  );
const commit = git('rev-parse', 'HEAD').trim();
const WEAK = 'mistralai/Mixtral-8x7B-Instruct-v0.1';
const STRONG = 'gpt-4-1106-preview';

/** RFC 4180 rows (quoted fields may hold newlines and doubled quotes). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else if (c !== '\r') field += c;
  }
  if (field || row.length) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

interface Row {
  text: string;
  weakFails: boolean;
  group: string;
}

const files = git('ls-tree', '--name-only', 'HEAD', 'routellm/evals/mmlu/responses/')
  .split('\n')
  .filter((f) => f.endsWith('.csv'))
  .sort();
const train: Row[] = [];
const mmluTest: Row[] = [];
files.forEach((file, i) => {
  const [header, ...rows] = parseCsv(git('show', `HEAD:${file}`));
  const wi = header?.indexOf(WEAK) ?? -1;
  if (wi < 0) throw new Error(`${file}: no ${WEAK} column`);
  const subject = file.replace(/^.*mmlu_/, '').replace(/\.csv$/, '');
  for (const r of rows) {
    if (r.length < 3) continue;
    const row = {
      text: (r[0] as string).replace(/\nAnswer:\s*$/, ''),
      weakFails: r[wi] === 'False',
      group: subject,
    };
    (i % 4 === 3 ? mmluTest : train).push(row);
  }
});

// MT-bench: first turns; the weak model fails when the judge rates it below the strong one.
const questions = new Map<number, string>();
for (const l of git('show', 'HEAD:routellm/evals/mt_bench/question.jsonl').split('\n').filter(Boolean)) {
  const q = JSON.parse(l) as { question_id: number; turns: string[] };
  questions.set(q.question_id, q.turns[0] as string);
}
const scores = new Map<string, number>();
for (const l of git('show', 'HEAD:routellm/evals/mt_bench/judgements.jsonl').split('\n').filter(Boolean)) {
  const j = JSON.parse(l) as { question_id: number; model: string; score: number; turn: number };
  if (j.turn === 1) scores.set(`${j.question_id}/${j.model}`, j.score);
}
const mtBench: Row[] = [];
for (const [id, text] of questions) {
  const weak = scores.get(`${id}/${WEAK}`);
  const strong = scores.get(`${id}/${STRONG}`);
  if (weak === undefined || strong === undefined) continue;
  mtBench.push({ text, weakFails: weak < strong, group: 'mt_bench' });
}

interface Example {
  dense: number[];
  buckets: number[];
  y: number;
}
const toExample = (r: Row): Example => ({
  dense: denseFeatures(extractFeatures({ model: 'x', messages: [{ role: 'user', content: r.text }] })),
  buckets: hashedBuckets(r.text),
  y: r.weakFails ? 1 : 0,
});
const examples = train.map(toExample);

// Full-batch Adam with L2; the hashed weights get a stronger penalty (many, sparse).
const D = DENSE_NAMES.length;
const w = { bias: 0, dense: new Float64Array(D), hashed: new Float64Array(HASH_BUCKETS) };
const n = examples.length;
const m = new Float64Array(1 + D + HASH_BUCKETS);
const v = new Float64Array(1 + D + HASH_BUCKETS);
const L2_DENSE = 1e-4;
const L2_HASHED = 1e-3;
const lr = 0.05;
for (let step = 1; step <= 300; step++) {
  const g = new Float64Array(1 + D + HASH_BUCKETS);
  for (const ex of examples) {
    const scale = ex.buckets.length ? 1 / Math.sqrt(ex.buckets.length) : 0;
    let z = w.bias;
    ex.dense.forEach((x, i) => (z += x * (w.dense[i] as number)));
    for (const b of ex.buckets) z += scale * (w.hashed[b] as number);
    const err = 1 / (1 + Math.exp(-z)) - ex.y;
    g[0] = (g[0] as number) + err;
    ex.dense.forEach((x, i) => (g[1 + i] = (g[1 + i] as number) + err * x));
    for (const b of ex.buckets) g[1 + D + b] = (g[1 + D + b] as number) + err * scale;
  }
  for (let k = 0; k < g.length; k++) {
    const param = k === 0 ? w.bias : k <= D ? (w.dense[k - 1] as number) : (w.hashed[k - 1 - D] as number);
    const grad = (g[k] as number) / n + (k === 0 ? 0 : (k <= D ? L2_DENSE : L2_HASHED) * param);
    m[k] = 0.9 * (m[k] as number) + 0.1 * grad;
    v[k] = 0.999 * (v[k] as number) + 0.001 * grad * grad;
    const upd =
      (lr * ((m[k] as number) / (1 - 0.9 ** step))) /
      (Math.sqrt((v[k] as number) / (1 - 0.999 ** step)) + 1e-8);
    if (k === 0) w.bias -= upd;
    else if (k <= D) w.dense[k - 1] = param - upd;
    else w.hashed[k - 1 - D] = param - upd;
  }
}

const r4 = (x: number): number => Math.round(x * 1e4) / 1e4;
const baseRate = examples.filter((e) => e.y === 1).length / n;
writeFileSync(
  new URL('../dataplane/src/pipeline/routing/outcome-weights.ts', import.meta.url),
  `// Generated by scripts/train-routing.ts from lm-sys/RouteLLM@${commit} (MMLU, ${n} rows of ${
    files.length - Math.ceil(files.length / 4) + (files.length % 4 === 3 ? 0 : 0)
  } subjects). Do not edit.\n` +
    `// Dense order: ${DENSE_NAMES.join(', ')}.\n` +
    `import type { OutcomeWeights } from './outcome.ts';\n\n` +
    `export const OUTCOME_WEIGHTS: OutcomeWeights = {\n  bias: ${r4(w.bias)},\n  baseRate: ${r4(baseRate)},\n` +
    `  dense: [${[...w.dense].map(r4).join(', ')}],\n  hashed: [${[...w.hashed].map(r4).join(', ')}],\n};\n`,
);
const dump = (rows: Row[]): string =>
  rows.map((r) => JSON.stringify({ group: r.group, weakFails: r.weakFails, text: r.text })).join('\n') + '\n';
const outDir = new URL('../test/data/routing/outcomes/', import.meta.url);
writeFileSync(new URL('mmlu-heldout.jsonl', outDir), dump(mmluTest));
writeFileSync(new URL('mt-bench.jsonl', outDir), dump(mtBench));
writeFileSync(
  new URL('MANIFEST.json', outDir),
  JSON.stringify(
    {
      source: 'github.com/lm-sys/RouteLLM',
      commit,
      licence: 'Apache-2.0',
      files: [
        'routellm/evals/mmlu/responses/*.csv',
        'routellm/evals/mt_bench/question.jsonl',
        'routellm/evals/mt_bench/judgements.jsonl',
      ],
      notUsed: 'routellm/evals/gsm8k (reserved for independent evaluation)',
      label: `weakFails: ${WEAK} wrong (MMLU) or rated below ${STRONG} on the first turn (MT-bench)`,
      rows: { train: n, mmluHeldOut: mmluTest.length, mtBench: mtBench.length },
      heldOutSubjects: [...new Set(mmluTest.map((r) => r.group))],
    },
    null,
    1,
  ) + '\n',
);
console.log(
  `trained on ${n} rows (weak fails ${(baseRate * 100).toFixed(1)} %); held out ${mmluTest.length} MMLU, ${mtBench.length} MT-bench`,
);
