/**
 * Writes the unseen-domain routing test split, test/data/routing/outcomes/arena-bench.jsonl,
 * and records its source in MANIFEST.json (key `unseen`):
 *
 *   npx tsx scripts/build-routing-unseen.ts <lmarena/arena-hard-auto git dir>
 *
 * Arena-Bench-V1 (the 300-prompt precursor of Arena-Hard: real Chatbot Arena prompts, code,
 * maths, reasoning and writing) graded one answer at a time by GPT-4 against a GPT-4 reference
 * answer (1-10). The label is the MT-bench one, fixed before any score was looked at: the weak
 * model (Mixtral-8x7B) fails when it is rated below the strong one (GPT-4-Turbo). Prompts that
 * also appear in any training or dev set are dropped, so the split stays unseen. Nothing in
 * scripts/train-routing.ts or test/eval/routing-thresholds.ts reads this file.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';

const [dir] = process.argv.slice(2);
if (!dir) throw new Error('usage: build-routing-unseen.ts <arena-hard-auto git dir>');
/** The last commit holding Arena-Bench-V1's Mixtral judgments (later commits moved to v0.1). */
const COMMIT = 'ac4ad9a93a452cb256e83fe6d89957676c64f19b';
const BASE = 'data/arena-bench-v1';
const WEAK = 'Mixtral-8x7B-Instruct-v0.1';
const STRONG = 'gpt-4-turbo';
const show = (path: string): string =>
  execFileSync('git', ['--git-dir', dir, 'show', `${COMMIT}:${path}`], {
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
const lines = (path: string): unknown[] =>
  show(path)
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as unknown);

const scoresOf = (model: string): Map<string, number> => {
  const out = new Map<string, number>();
  for (const j of lines(`${BASE}/model_judgment/${model}.jsonl`) as {
    question_id: string;
    score: number | null;
  }[])
    if (typeof j.score === 'number') out.set(j.question_id, j.score);
  return out;
};
const weak = scoresOf(WEAK);
const strong = scoresOf(STRONG);

const outDir = new URL('../test/data/routing/outcomes/', import.meta.url);
const norm = (t: string): string => t.toLowerCase().replace(/\s+/g, ' ').trim();
const seen = new Set<string>();
for (const file of ['mmlu-dev.jsonl', 'mmlu-heldout.jsonl', 'vicuna-dev.jsonl', 'mt-bench.jsonl'])
  for (const l of readFileSync(new URL(file, outDir), 'utf8').split('\n').filter(Boolean))
    seen.add(norm((JSON.parse(l) as { text: string }).text));

const rows: string[] = [];
let unscored = 0;
let overlap = 0;
for (const q of lines(`${BASE}/question.jsonl`) as { question_id: string; turns: string[] }[]) {
  const w = weak.get(q.question_id);
  const s = strong.get(q.question_id);
  const text = q.turns[0];
  if (w === undefined || s === undefined || text === undefined) {
    unscored++;
    continue;
  }
  if (seen.has(norm(text))) {
    overlap++;
    continue;
  }
  rows.push(JSON.stringify({ group: 'arena_bench_v1', weakFails: w < s, text }));
}
writeFileSync(new URL('arena-bench.jsonl', outDir), rows.join('\n') + '\n');

const manifestUrl = new URL('MANIFEST.json', outDir);
const manifest = JSON.parse(readFileSync(manifestUrl, 'utf8')) as Record<string, unknown>;
manifest.unseen = {
  repo: 'github.com/lmarena/arena-hard-auto',
  commit: COMMIT,
  licence: 'Apache-2.0',
  files: [
    `${BASE}/question.jsonl`,
    `${BASE}/model_judgment/${WEAK}.jsonl`,
    `${BASE}/model_judgment/${STRONG}.jsonl`,
  ],
  label: `weakFails: GPT-4 (single-answer grading against a GPT-4 reference, 1-10) rated ${WEAK} below ${STRONG}`,
  rows: rows.length,
  weakFails: rows.filter((r) => r.includes('"weakFails":true')).length,
  droppedUnscored: unscored,
  droppedAsOverlap: overlap,
  use: 'test only: committed before any training on new data, read once at the end; never used for a choice',
};
writeFileSync(manifestUrl, JSON.stringify(manifest, null, 1) + '\n');
console.log(`arena-bench.jsonl: ${rows.length} rows (${unscored} unscored, ${overlap} overlapping dropped)`);
