/**
 * Routing against outcomes: `npx tsx test/eval/routing-auc.ts`. AUC for "the weak model
 * fails" on held-out data (MMLU subjects never trained on; MT-bench, another domain), for the
 * outcome model alone, the rule score and the combined classifier score, plus classification
 * time. Data: test/data/routing/outcomes (see its MANIFEST.json).
 */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { ChatRequest } from '../../dataplane/src/formats/openai/types.ts';
import { auc } from '../../dataplane/src/pipeline/routing/auc.ts';
import { classifyDifficulty, scoreFeatures } from '../../dataplane/src/pipeline/routing/classify.ts';
import { extractFeatures } from '../../dataplane/src/pipeline/routing/features.ts';
import { weakFailProbability } from '../../dataplane/src/pipeline/routing/outcome.ts';

interface OutcomeRow {
  group: string;
  weakFails: boolean;
  text: string;
}

const load = (name: string): OutcomeRow[] =>
  readFileSync(fileURLToPath(new URL(`../data/routing/outcomes/${name}`, import.meta.url)), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as OutcomeRow);

export function printRoutingAuc(): void {
  for (const [name, file] of [
    ['MMLU, held-out subjects', 'mmlu-heldout.jsonl'],
    ['MT-bench, first turns (not tuned on)', 'mt-bench.jsonl'],
  ] as const) {
    const rows = load(file);
    const reqs: ChatRequest[] = rows.map((r) => ({
      model: 'eval',
      messages: [{ role: 'user', content: r.text }],
    }));
    const y = rows.map((r) => r.weakFails);
    const outcome = reqs.map((req, i) => weakFailProbability(extractFeatures(req), rows[i]?.text ?? ''));
    const rules = reqs.map((req) =>
      scoreFeatures(extractFeatures(req)).reduce(
        (s, c) => s + (c.name.startsWith('weak model') ? 0 : c.weight),
        0,
      ),
    );
    const combined = reqs.map((req) => classifyDifficulty(req).score);
    const complex = reqs.map((req) => (classifyDifficulty(req).level === 'complex' ? 1 : 0));
    const fails = y.filter(Boolean).length;
    console.log(
      `routing, ${name}: ${rows.length} prompts, weak model fails on ${fails}\n` +
        `  AUC weak-fails: outcome model ${auc(outcome, y).toFixed(3)}, rule score ${auc(rules, y).toFixed(3)}, ` +
        `classifier score ${auc(combined, y).toFixed(3)}, complex level ${auc(complex, y).toFixed(3)}`,
    );
  }
  const sample = load('mt-bench.jsonl').map((r): ChatRequest => ({
    model: 'eval',
    messages: [{ role: 'user', content: r.text }],
  }));
  const times: number[] = [];
  for (let i = 0; i < 4000; i++) {
    const req = sample[i % sample.length] as ChatRequest;
    const t = performance.now();
    classifyDifficulty(req);
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  const at = (p: number): string => (times[Math.floor((p / 100) * (times.length - 1))] ?? 0).toFixed(3);
  console.log(`  classification time (MT-bench prompts): p50 ${at(50)} ms, p99 ${at(99)} ms`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) printRoutingAuc();
