/**
 * Writes the cascade-evidence outcome files (test/data/routing/outcomes/cascade/) and their
 * manifest, from the LifeEval calibration study's parsed results:
 *
 *   npx tsx scripts/build-routing-cascade.ts <NoamMichael/Comparing-Confidence-in-LLMs git dir>
 *
 * Per row: the text a user would send, whether Llama-3.1-8B-Instruct (the weak model) answered
 * wrong, and two unsureness signals from that same answer, both fixed before any figure was
 * computed (test/data/routing/outcomes/UNSEEN.md, "Cascade evidence"):
 * - tokenUnsure: 1 − the largest answer-token probability over the options;
 * - statedUnsure: 1 − the probability the model stated for its chosen answer.
 * Also Llama-3.1-70B-Instruct's outcome (the strong model of the cost picture) and
 * claude-3-haiku's outcome and stated unsureness (a second weak model, description only).
 * Nothing here computes a score against a label.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { gitShow, normPrompt, parseCsv } from './routing-data.ts';

const [dir] = process.argv.slice(2);
if (!dir) throw new Error('usage: build-routing-cascade.ts <Comparing-Confidence-in-LLMs git dir>');

const COMMIT = '560aae77b190dfb58ce6c0ec3e658fc03d65a45d';
const WEAK = 'Llama/Meta-Llama-3.1-8B-Instruct';
const STRONG = 'Llama/Meta-Llama-3.1-70B-Instruct';
const HAIKU = 'Claude/claude-3-haiku-20240307';

interface Domain {
  file: string;
  source: string;
  name: string;
  /** Option labels as the model answers them. */
  options: readonly string[];
  licence: string;
}
const LETTERS4 = ['A', 'B', 'C', 'D'] as const;
const DOMAINS: readonly Domain[] = [
  {
    file: 'sciq.jsonl',
    source: 'sciq_test',
    name: 'SciQ test (Welbl et al. 2017, "Crowdsourcing Multiple Choice Science Questions")',
    options: LETTERS4,
    licence: 'CC-BY-NC-3.0 (allenai/sciq dataset card): evaluation only, never trained on',
  },
  {
    file: 'lsat-ar.jsonl',
    source: 'lsat_ar_test',
    name: 'LSAT-AR as packaged by AGIEval (Zhong et al. 2023, microsoft/AGIEval)',
    options: ['A', 'B', 'C', 'D', 'E'],
    licence:
      "AGIEval repository MIT; the LSAT questions remain the Law School Admission Council's: evaluation only",
  },
  {
    file: 'sat-en.jsonl',
    source: 'sat_en',
    name: 'SAT-EN as packaged by AGIEval (Zhong et al. 2023, microsoft/AGIEval)',
    options: LETTERS4,
    licence:
      "AGIEval repository MIT; the SAT passages and questions remain the College Board's: evaluation only",
  },
  {
    file: 'boolq.jsonl',
    source: 'boolq_valid',
    name: 'BoolQ validation, questions only (Clark et al. 2019, "BoolQ")',
    options: ['True', 'False'],
    licence: 'CC-BY-SA-3.0 (google-research-datasets/boolean-questions)',
  },
];

type Row = Record<string, string>;
const csvRows = (path: string): Row[] => {
  const [head, ...body] = parseCsv(gitShow(dir, COMMIT, path)).filter((r) => r.length > 1);
  if (!head) throw new Error(`${path}: empty`);
  return body.map((r) => Object.fromEntries(head.map((h, i) => [h, r[i] ?? ''])));
};
const byId = (rows: Row[]): Map<string, Row> => new Map(rows.map((r) => [r['Question ID'] ?? '', r]));
const results = (model: string, source: string): Map<string, Row> =>
  byId(csvRows(`Parsed Results/${model}/${source}_${model.split('/')[1]}.csv`));

const clip = (x: number): number => Math.min(1, Math.max(0, x));

/** 1 − the largest option probability, normalised over the options; 1 when any is missing. */
function tokenUnsure(r: Row, options: readonly string[]): number {
  const p = options.map((o) => Number.parseFloat(r[`${o}_prob`] ?? ''));
  if (p.some((x) => !Number.isFinite(x) || x < 0)) return 1;
  const sum = p.reduce((s, x) => s + x, 0);
  return sum > 0 ? 1 - Math.max(...p) / sum : 1;
}

/** 1 − the stated probability of the chosen answer; 1 when the answer is no option. */
function statedUnsure(r: Row, options: readonly string[]): number {
  const answer = (r.Answer ?? '').trim();
  if (!options.includes(answer)) return 1;
  const stated = Number.parseFloat((options.length === 2 ? r.Confidence : r[answer]) ?? '');
  return Number.isFinite(stated) ? 1 - clip(stated) : 1;
}

const fails = (r: Row | undefined, key: string): boolean => (r?.Answer ?? '').trim() !== key;

/** The text a user would send: the question, then the options as lines (no instruction scaffold). */
function userText(q: Row, d: Domain): string {
  if (d.options.length === 2) return (q.Question ?? '').trim();
  const stem = (q.Question ?? q.query ?? '').split('Answer Choices:')[0]?.trim() ?? '';
  return [stem, ...d.options.map((o) => `${o}) ${(q[`Option ${o}`] ?? '').trim()}`)].join('\n');
}

const outDir = new URL('../test/data/routing/outcomes/', import.meta.url);
// A prompt already in another routing file would not be fresh. The unseen files are left out
// here (no script but their own builders may read them); routing-data.test.ts checks them.
const seen = new Set<string>();
for (const file of [
  'mmlu-dev.jsonl',
  'mmlu-heldout.jsonl',
  'vicuna-dev.jsonl',
  'mt-bench.jsonl',
  'wide/bbh.jsonl',
  'wide/svamp.jsonl',
  'wide/apps.jsonl',
  'wide/draw-train.jsonl',
  'wide/code-train.jsonl',
])
  for (const l of readFileSync(new URL(file, outDir), 'utf8').split('\n').filter(Boolean))
    seen.add(normPrompt((JSON.parse(l) as { text: string }).text));

const cascadeDir = new URL('cascade/', outDir);
mkdirSync(cascadeDir, { recursive: true });
const manifestDomains = [];
for (const d of DOMAINS) {
  const questions = csvRows(`Formatted Benchmarks/${d.source}_formatted.csv`);
  const weak = results(WEAK, d.source);
  const strong = results(STRONG, d.source);
  const haiku = results(HAIKU, d.source);
  const rows = [];
  let dropped = 0;
  for (const q of questions) {
    const id = q['Question ID'] ?? '';
    const key = (q['Correct Answer Letter'] ?? q['Correct Answer'] ?? '').trim();
    const w = weak.get(id);
    if (!w || !strong.has(id) || !haiku.has(id)) throw new Error(`${d.source} ${id}: a model has no row`);
    const text = userText(q, d);
    if (seen.has(normPrompt(text))) {
      dropped++;
      continue;
    }
    const h = haiku.get(id) as Row;
    rows.push({
      group: d.source,
      id,
      text,
      weakFails: fails(w, key),
      tokenUnsure: tokenUnsure(w, d.options),
      statedUnsure: statedUnsure(w, d.options),
      strongFails: fails(strong.get(id), key),
      haikuFails: fails(h, key),
      haikuStatedUnsure: statedUnsure(h, d.options),
    });
  }
  writeFileSync(new URL(d.file, cascadeDir), rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  manifestDomains.push({
    file: d.file,
    content: d.name,
    contentLicence: d.licence,
    files: [
      `Formatted Benchmarks/${d.source}_formatted.csv`,
      ...[WEAK, STRONG, HAIKU].map((m) => `Parsed Results/${m}/${d.source}_${m.split('/')[1]}.csv`),
    ],
    rows: rows.length,
    weakFails: rows.filter((r) => r.weakFails).length,
    strongFails: rows.filter((r) => r.strongFails).length,
    haikuFails: rows.filter((r) => r.haikuFails).length,
    droppedAsOverlap: dropped,
  });
}
writeFileSync(
  new URL('MANIFEST.json', cascadeDir),
  JSON.stringify(
    {
      repo: 'github.com/NoamMichael/Comparing-Confidence-in-LLMs',
      commit: COMMIT,
      licence: 'MIT',
      licenceNote:
        "'licence' is the repository's own (its parsed results); each domain's questions keep their own",
      study:
        'LifeEval calibration study (Moore Accuracy Lab, Berkeley Haas): one JSON answer per item at temperature 0, with a stated probability per option; token probabilities for the Llama models',
      weakModel: 'meta-llama/Meta-Llama-3.1-8B-Instruct',
      strongModel: 'meta-llama/Meta-Llama-3.1-70B-Instruct (cost picture only)',
      secondWeakModel: 'claude-3-haiku-20240307 (stated probabilities only; description, not verdict)',
      label:
        "weakFails: the weak model's parsed answer is not the key (empty, unparsed or off-option answers fail)",
      signals: {
        tokenUnsure:
          '1 - the largest answer-token probability over the options, normalised over the options; 1 when missing (primary)',
        statedUnsure:
          '1 - the stated probability of the chosen answer (BoolQ: the stated confidence); 1 when the answer is no option or the value is missing (secondary)',
      },
      use: 'evidence experiment only (UNSEEN.md, "Cascade evidence"): nothing trains, tunes or picks a threshold on these files; test/eval/routing-cascade.ts scores them',
      domains: manifestDomains,
    },
    null,
    1,
  ) + '\n',
);
console.log(manifestDomains.map((d) => `${d.file}: ${d.rows} rows, weak fails ${d.weakFails}`).join('\n'));
