/**
 * Experiment (issue 13): an outcome model over item-difficulty features (how confusable the
 * answer options are, how rare the words, the form of the question; test/eval/routing-item-features.ts),
 * scored by leave-one-domain-out (LODO) AUC on the seven seen domains only. Feature set, trainer
 * settings and ship rule were frozen in test/data/routing/outcomes/UNSEEN.md before any figure
 * was computed. It prints figures and writes nothing.
 *
 *   npx tsx scripts/train-routing-items.ts <lm-sys/RouteLLM git dir>
 *
 * Prints: each feature's own AUC per domain (description only: nothing is selected on it), the
 * shipped weights' AUC, the LODO AUC of the log token count alone, of candidate A (item features
 * + log tokens) and of candidate B (A + the shipped model's log-odds), and the verdict of the
 * rule's lines 1–2 (line 3 needs the real classifier and is only built if they pass).
 * Deterministic: fixed order, full-batch Adam, no randomness; no fresh file is read.
 */
import { classifyDifficulty } from '../dataplane/src/pipeline/routing/classify.ts';
import { ITEM_FEATURE_NAMES, itemFeatures } from '../test/eval/routing-item-features.ts';
import { aucOf, type DomainModel, type Example, fitDomain, line, lodo } from './routing-domain-sum.ts';
import { loadSeenDomains, SEEN_DOMAINS, type SeenDomain, type SeenRow } from './routing-seen-domains.ts';

const routeLlmDir = process.argv[2];
if (!routeLlmDir) throw new Error('usage: train-routing-items.ts <RouteLLM git dir>');
const { rowsOf } = loadSeenDomains(routeLlmDir);

/** Frozen before any figure (UNSEEN.md): scikit-learn's default, not tuned. */
const C = 1;
/** The rule's five domains: none of them trained the shipped model. */
const RULE_DOMAINS: readonly SeenDomain[] = ['bbh', 'svamp', 'apps', 'draw', 'code'];
const SHIPPED_REFERENCE: Record<string, number> = {
  bbh: 0.646,
  svamp: 0.644,
  apps: 0.602,
  draw: 0.656,
  code: 0.365,
};
const SHIPPED_MEAN = 0.583;

const F = ITEM_FEATURE_NAMES.length;
const TOKENS = ITEM_FEATURE_NAMES.indexOf('logTokens');
const SHIPPED = F; // candidate B's extra input
const shippedP = (r: SeenRow): number =>
  classifyDifficulty({ model: 'x', messages: [{ role: 'user', content: r.text }] }).weakFails;
const toExample = (r: SeenRow): Example => {
  const p = Math.min(Math.max(shippedP(r), 1e-6), 1 - 1e-6);
  return { x: Float64Array.from([...itemFeatures(r.text), Math.log(p / (1 - p))]), label: r.weakFails };
};
const started = performance.now();
const examples = Object.fromEntries(SEEN_DOMAINS.map((d) => [d, rowsOf[d].map(toExample)])) as Record<
  SeenDomain,
  Example[]
>;
console.log(
  `rows: ${SEEN_DOMAINS.map((d) => `${d} ${examples[d].length}`).join(', ')}; features in ${((performance.now() - started) / 1000).toFixed(1)} s`,
);
const keep = (ex: Example[], inputs: (k: number) => boolean): Example[] =>
  ex.map((e) => ({ ...e, x: e.x.map((v, k) => (inputs(k) ? v : 0)) }));

// Description: each feature's own AUC per domain, and the share of rows with options.
const cell = (a: number): string => (Number.isNaN(a) ? '  -  ' : a.toFixed(3));
console.log(`\n| feature | ${SEEN_DOMAINS.join(' | ')} |\n|---|${SEEN_DOMAINS.map(() => '---').join('|')}|`);
[...ITEM_FEATURE_NAMES, 'shippedLogOdds'].forEach((name, k) =>
  console.log(
    `| ${name} | ${SEEN_DOMAINS.map((d) =>
      cell(
        aucOf(
          examples[d].map((e) => e.x[k] as number),
          examples[d],
        ),
      ),
    ).join(' | ')} |`,
  ),
);
console.log(
  `rows with options: ${SEEN_DOMAINS.map((d) => `${d} ${((100 * examples[d].filter((e) => e.x[0] === 1).length) / examples[d].length).toFixed(0)} %`).join(', ')}\n`,
);

// Description: the same inside each sub-task (MMLU subject, BIG-Bench Hard task), averaged
// with weights by rows: does a cue rank items, or only tell sub-tasks apart?
const WITHIN: readonly SeenDomain[] = ['mmlu', 'bbh'];
const withinAuc = (d: SeenDomain, k: number): number => {
  const groups = new Map<string, Example[]>();
  examples[d].forEach((e, i) => {
    const g = rowsOf[d][i]?.group ?? '';
    groups.set(g, [...(groups.get(g) ?? []), e]);
  });
  let sum = 0;
  let n = 0;
  for (const ex of groups.values()) {
    const pos = ex.filter((e) => e.label).length;
    // Both outcomes at least five times, else a sub-task's AUC is noise.
    if (pos < 5 || ex.length - pos < 5) continue;
    const a = aucOf(
      ex.map((e) => e.x[k] as number),
      ex,
    );
    sum += a * ex.length;
    n += ex.length;
  }
  return n ? sum / n : NaN;
};
console.log(
  `| feature, inside sub-tasks | ${WITHIN.join(' | ')} |\n|---|${WITHIN.map(() => '---').join('|')}|`,
);
[...ITEM_FEATURE_NAMES, 'shippedLogOdds'].forEach((name, k) =>
  console.log(`| ${name} | ${WITHIN.map((d) => cell(withinAuc(d, k))).join(' | ')} |`),
);
console.log();

const shipped = Object.fromEntries(
  SEEN_DOMAINS.map((d) => [
    d,
    aucOf(
      examples[d].map((e) => e.x[SHIPPED] as number),
      examples[d],
    ),
  ]),
);
line('shipped weights (mmlu, vicuna in-sample)', shipped);
const candidates: [string, (k: number) => boolean][] = [
  ['token count alone', (k) => k === TOKENS],
  ['A: item features + log tokens', (k) => k < F],
  ['B: A + shipped log-odds', () => true],
];
const results = candidates.map(([name, inputs]) => {
  const models = Object.fromEntries(
    SEEN_DOMAINS.map((d) => [d, fitDomain(keep(examples[d], inputs), C, true)]),
  ) as Record<SeenDomain, DomainModel>;
  const per = lodo(
    models,
    Object.fromEntries(SEEN_DOMAINS.map((d) => [d, keep(examples[d], inputs)])) as Record<
      SeenDomain,
      Example[]
    >,
    SEEN_DOMAINS,
  );
  line(`${name}, C=${C}, LODO over all seven`, per);
  return { name, per };
});

// The frozen rule, lines 1–2 (the shipped figures are the README's, on the same rows).
console.log(
  '\nship rule, lines 1-2 (mean over bbh, svamp, apps, draw, code >= 0.603; none > 0.03 below shipped):',
);
for (const { name, per } of results.slice(1)) {
  const m = RULE_DOMAINS.reduce((s, d) => s + (per[d] as number), 0) / RULE_DOMAINS.length;
  const drops = RULE_DOMAINS.filter((d) => (per[d] as number) < (SHIPPED_REFERENCE[d] as number) - 0.03);
  const pass = m >= SHIPPED_MEAN + 0.02 && drops.length === 0;
  console.log(
    `  ${name}: mean ${m.toFixed(3)} (needs ${(SHIPPED_MEAN + 0.02).toFixed(3)}); ` +
      `more than 0.03 below shipped on: ${drops.join(', ') || 'none'} -> ${pass ? 'PASSES' : 'FAILS'}`,
  );
}
console.log(`total ${((performance.now() - started) / 1000).toFixed(1)} s`);
