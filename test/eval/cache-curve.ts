/**
 * The cache's look-alike curve per embedder: `npx tsx test/eval/cache-curve.ts`. For each
 * pair set (tuning, held-out) and embedder (builtin, minilm) it prints, per DualScore
 * threshold, the share of look-alike pairs (different facts: must never hit) and of
 * paraphrase pairs (same question: should hit) that would be served, with the look-alike
 * guard, and the operating point at the embedder's default `reuse` threshold.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createBuiltinEmbedder } from '../../dataplane/src/pipeline/cache/builtin-embedder.ts';
import type { Embedder } from '../../dataplane/src/pipeline/cache/embedder.ts';
import { lookalikeCurve, parsePairs } from '../../dataplane/src/pipeline/cache/lookalike-eval.ts';
import { createMinilmEmbedder } from '../../dataplane/src/pipeline/cache/minilm-embedder.ts';
import { resolveCachePolicy } from '../../dataplane/src/pipeline/cache/policy.ts';

const sets = [
  ['tuning', 'lookalikes.jsonl'],
  ['held-out', 'lookalikes.holdout.jsonl'],
  ['templated held-out', 'templated.jsonl'],
] as const;
const embedders: [string, Embedder][] = [
  ['builtin', createBuiltinEmbedder()],
  ['minilm', createMinilmEmbedder()],
];
const thresholds = Array.from({ length: 21 }, (_, i) => Math.round((0.8 + i * 0.01) * 100) / 100);
const pct = (x: number) => `${(x * 100).toFixed(1)}%`.padStart(7);

export async function printCacheCurves(): Promise<void> {
  for (const [setName, file] of sets) {
    const path = fileURLToPath(new URL(`../data/cache/${file}`, import.meta.url));
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch {
      continue;
    }
    const pairs = parsePairs(text);
    const nl = pairs.filter((p) => p.kind === 'lookalike').length;
    console.log(`\ncache, ${setName} (${file}): ${nl} look-alike, ${pairs.length - nl} paraphrase pairs`);
    for (const [name, embedder] of embedders) {
      const reuse = resolveCachePolicy({ embeddingModel: name }).thresholds.reuse;
      const rows = await lookalikeCurve(pairs, thresholds, embedder);
      console.log(
        `  ${name}: threshold  false-hits(no guard) false-hits(guard)  recall(no guard) recall(guard)`,
      );
      for (const r of rows)
        console.log(
          `   ${r.threshold === reuse ? '*' : ' '}${r.threshold.toFixed(2)}  ${pct(r.falseHits)} ${pct(r.falseHitsGuarded)}  ${pct(r.paraphraseHits)} ${pct(r.paraphraseHitsGuarded)}`,
        );
    }
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await printCacheCurves();
