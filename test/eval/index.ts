/**
 * `npm run eval`: every judgment figure on the project's own evaluation sets, one part per
 * file under test/eval/ (each exports a print function and also runs alone).
 */
import { printCacheCurves } from './cache-curve.ts';
import { printGuardrails } from './guardrails-eval.ts';
import { printRoutingAuc } from './routing-auc.ts';

const parts: [string, () => Promise<void> | void][] = [
  ['guardrails', printGuardrails],
  ['cache look-alike curve', printCacheCurves],
  ['routing against outcomes', printRoutingAuc],
];

for (const [name, run] of parts) {
  console.log(`\n=== ${name} ===`);
  await run();
}
