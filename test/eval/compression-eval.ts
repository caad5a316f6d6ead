/**
 * Compression evaluation: `npx tsx test/eval/compression-eval.ts [--cases]`. Runs the
 * deterministic corpus (dataplane/src/pipeline/compression/fixtures.ts `corpus()`) through
 * the stage's steps with the fake provider's extraction answer, and prints per corpus kind
 * the token savings and the share of paths, identifiers, pending requirements and
 * unresolved errors the compressed request still carries.
 */
import { fakeExtraction } from '../../dataplane/src/fake-provider/extraction.ts';
import { evaluateCase, formatSummary, summarise } from '../../dataplane/src/pipeline/compression/evaluate.ts';
import { corpus } from '../../dataplane/src/pipeline/compression/fixtures.ts';

const results = corpus().map((g) => evaluateCase(g, fakeExtraction));
if (process.argv.includes('--cases'))
  for (const r of results)
    console.log(
      `${r.kind.padEnd(6)} ${String(r.originalTokens).padStart(7)} -> ${String(r.tokens).padStart(7)} ` +
        `${r.mode}${r.fallback ? ` (${r.fallback})` : ''} facts ${r.kept}/${r.facts}` +
        (r.missing.length ? ` missing: ${r.missing.slice(0, 3).join(' | ')}` : ''),
    );
console.log(formatSummary(summarise(results)));
