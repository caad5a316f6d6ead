/**
 * How classify.ts's OUTCOME_COMPLEX_FROM was chosen: `npx tsx test/eval/routing-thresholds.ts`.
 * For each threshold it prints the level AUC on the two dev sets and the labelled sets'
 * accuracy and complex-to-trivial count. The rule: the best mean dev level AUC among
 * thresholds that keep complex->trivial at 0 and cost the tuning labelled set at most two
 * points of accuracy. The test splits (MMLU test subjects, MT-bench) are not read here.
 */
import { fileURLToPath } from 'node:url';
import { evaluate, loadLabelled } from '../../dataplane/src/pipeline/routing/evaluate.ts';
import { loadOutcomes, outcomeAucs } from './routing-outcomes.ts';

/** Accuracy the tuning labelled set may lose: "not badly hurt". */
const BUDGET = 0.02;
const labelled = loadLabelled(fileURLToPath(new URL('../data/routing/labelled.jsonl', import.meta.url)));
const holdout = loadLabelled(fileURLToPath(new URL('../data/routing/holdout.jsonl', import.meta.url)));
const mmluDev = loadOutcomes('mmlu-dev.jsonl');
const vicuna = loadOutcomes('vicuna-dev.jsonl');

const baseline = evaluate(labelled, 1, 1).accuracy;
let best: { complexFrom: number; dev: number } | undefined;
for (const complexFrom of [0.22, 0.24, 0.26, 0.28, 0.3, 0.32, 0.35, 0.4, 0.5, 1]) {
  const lab = evaluate(labelled, 1, complexFrom);
  const hold = evaluate(holdout, 1, complexFrom);
  const dev = (outcomeAucs(mmluDev, complexFrom).level + outcomeAucs(vicuna, complexFrom).level) / 2;
  const ok = lab.complexToTrivial === 0 && hold.complexToTrivial === 0 && lab.accuracy >= baseline - BUDGET;
  console.log(
    `complex from p >= ${complexFrom}: dev level AUC ${dev.toFixed(3)}; labelled ` +
      `${(lab.accuracy * 100).toFixed(1)} %, holdout ${(hold.accuracy * 100).toFixed(1)} %${ok ? '' : ' (over budget)'}`,
  );
  if (ok && (!best || dev > best.dev)) best = { complexFrom, dev };
}
console.log(
  `rules alone: labelled ${(baseline * 100).toFixed(1)} %; best within budget: ${JSON.stringify(best)}`,
);
