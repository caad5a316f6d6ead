/**
 * The look-alike curve of the default cache (builtin embedder, alpha 0.7 / beta 0.3, first
 * turns): `npx tsx test/eval/cache-lookalike-eval.ts [pairs.jsonl]`. For each threshold it
 * prints the share of look-alike pairs (different facts: must never hit) and of paraphrase
 * pairs (same question: should hit) whose DualScore reaches it, without and with the
 * look-alike guard. The pairs are ours (test/data/cache/lookalikes.jsonl).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { lookalikeCurve, parsePairs } from '../../dataplane/src/pipeline/cache/lookalike-eval.ts';

const file = process.argv[2] ?? fileURLToPath(new URL('../data/cache/lookalikes.jsonl', import.meta.url));
const pairs = parsePairs(readFileSync(file, 'utf8'));
const thresholds = Array.from({ length: 16 }, (_, i) => Math.round((0.84 + i * 0.01) * 100) / 100);
const rows = await lookalikeCurve(pairs, thresholds);
const pct = (x: number) => `${(x * 100).toFixed(1)} %`.padStart(8);
console.log(
  `${pairs.filter((p) => p.kind === 'lookalike').length} look-alike pairs, ` +
    `${pairs.filter((p) => p.kind === 'paraphrase').length} paraphrase pairs`,
);
console.log(
  'threshold | false hits, no guard | false hits, guard | paraphrase hits, no guard | paraphrase hits, guard',
);
for (const r of rows)
  console.log(
    `${r.threshold.toFixed(2)}      | ${pct(r.falseHits)}             | ${pct(r.falseHitsGuarded)}          | ${pct(r.paraphraseHits)}                  | ${pct(r.paraphraseHitsGuarded)}`,
  );
