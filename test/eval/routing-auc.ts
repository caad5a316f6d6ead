/**
 * Routing against outcomes: `npx tsx test/eval/routing-auc.ts` (also part of `npm run eval`).
 * For every outcome split (test/data/routing/outcomes, see its MANIFEST.json): AUC for "the
 * weak model fails" of the calibrated probability, of the classifier's score and of the
 * routing level (trivial < standard < complex, what routing acts on), the level mix, and for
 * the MMLU splits the calibration. Then the labelled sets' accuracy and classification time.
 */
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import type { ChatRequest } from '../../dataplane/src/formats/openai/types.ts';
import { classifyDifficulty } from '../../dataplane/src/pipeline/routing/classify.ts';
import { evaluate, loadLabelled } from '../../dataplane/src/pipeline/routing/evaluate.ts';
import { asRequest, loadOutcomes, OUTCOME_SPLITS, outcomeAucs } from './routing-outcomes.ts';

const pct = (x: number): string => `${(x * 100).toFixed(1)} %`;

export function printRoutingAuc(): void {
  for (const split of OUTCOME_SPLITS) {
    const rows = loadOutcomes(split.file);
    const a = outcomeAucs(rows);
    const fails = rows.filter((r) => r.weakFails).length;
    const p = rows.map((r) => classifyDifficulty(asRequest(r.text)).weakFails);
    const meanP = p.reduce((s, x) => s + x, 0) / rows.length;
    const brier = p.reduce((s, x, i) => s + (x - (rows[i]?.weakFails ? 1 : 0)) ** 2, 0) / rows.length;
    console.log(
      `routing, ${split.name} (${split.role}): ${rows.length} prompts, weak model fails on ${fails} (${pct(fails / rows.length)})\n` +
        `  AUC weak-fails: probability ${a.probability.toFixed(3)} (95 % ${a.probabilityInterval.map((x) => x.toFixed(2)).join('-')}), classifier score ${a.score.toFixed(3)}, ` +
        `routing level ${a.level.toFixed(3)}\n` +
        `  levels: trivial ${pct(a.levels.trivial)}, standard ${pct(a.levels.standard)}, complex ${pct(a.levels.complex)}; ` +
        `mean probability ${meanP.toFixed(3)}, Brier ${brier.toFixed(3)}`,
    );
  }
  for (const name of ['labelled', 'holdout']) {
    const e = evaluate(
      loadLabelled(fileURLToPath(new URL(`../data/routing/${name}.jsonl`, import.meta.url))),
      1,
    );
    console.log(
      `routing, ${name} set (${e.total} prompts): accuracy ${pct(e.accuracy)}, complex -> trivial ${e.complexToTrivial}`,
    );
  }
  const sample = loadOutcomes('mt-bench.jsonl').map((r): ChatRequest => asRequest(r.text));
  // Warm first: regex compilation and JIT happen once per process, not per request.
  for (const req of sample) classifyDifficulty(req);
  const times: number[] = [];
  for (let i = 0; i < 4000; i++) {
    const req = sample[i % sample.length] as ChatRequest;
    const t = performance.now();
    classifyDifficulty(req);
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  const at = (q: number): string => (times[Math.floor((q / 100) * (times.length - 1))] ?? 0).toFixed(3);
  console.log(`  classification time (MT-bench prompts): p50 ${at(50)} ms, p99 ${at(99)} ms`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) printRoutingAuc();
