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
import { classifyDifficulty } from '../dataplane/src/pipeline/routing/classify.ts';
import { extractFeatures } from '../dataplane/src/pipeline/routing/features.ts';
import { STATIC_DIMENSIONS, staticEmbedding } from '../test/eval/routing-static-embedding.ts';
import { aucOf, dot, type DomainModel, type Example, fitDomain, line, lodo } from './routing-domain-sum.ts';
import {
  SEEN_DOMAINS as DOMAINS,
  loadSeenDomains,
  type SeenDomain as Domain,
  type SeenRow as Row,
} from './routing-seen-domains.ts';

const routeLlmDir = process.argv[2];
if (!routeLlmDir) throw new Error('usage: train-routing-static.ts <RouteLLM git dir>');
const FIRST_FOUR: readonly Domain[] = ['mmlu', 'vicuna', 'draw', 'code'];
const { rowsOf } = loadSeenDomains(routeLlmDir);

// --- Features: what serving would compute --------------------------------------------------------
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

const tokensOnly = (ex: Example[]): Example[] =>
  ex.map((e) => ({ ...e, x: e.x.map((v, k) => (k === STATIC_DIMENSIONS ? v : 0)) }));

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
  line(`static embedding + tokens, C=${c}, LODO over the first four`, lodo(models, examples, FIRST_FOUR));
  line(`static embedding + tokens, C=${c}, LODO over all seven`, lodo(models, examples, DOMAINS));
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
const tokens = Object.fromEntries(
  DOMAINS.map((d) => [d, fitDomain(tokensOnly(examples[d]), 0.003)]),
) as Record<Domain, DomainModel>;
line('token count alone, C=0.003, LODO over all seven', lodo(tokens, examples, DOMAINS));
