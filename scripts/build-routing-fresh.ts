/**
 * Writes two fresh unseen routing domains and records their sources in
 * test/data/routing/outcomes/MANIFEST.json (key `freshUnseen`):
 *
 *   npx tsx scripts/build-routing-fresh.ts <Tebmer/Rereading-LLM-Reasoning git dir> \
 *     <allenai/macaw git dir>
 *
 * - commonsenseqa.jsonl: CommonsenseQA's 1,221 validation questions (everyday commonsense,
 *   five options); weakFails = gpt-3.5-turbo (Sept 2023, asked once for the boxed choice, no
 *   chain of thought) picked a wrong option.
 * - challenge300.jsonl: AI2's Challenge300 probes (short free-form commonsense, science,
 *   hypothetical, story and false-presupposition questions); weakFails = a human grader gave
 *   GPT-3 davinci's zero-shot answer less than full credit (half credit fails the user too).
 *
 * Both labels were fixed before any row was read, and both files were committed before any
 * routing model scored them. Nothing that trains, tunes, calibrates or picks a threshold reads
 * them (test/eval/routing-data.test.ts enforces it); `npm run eval` scores them.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { gitShow, normPrompt, writeOutcomes, type OutcomeOut } from './routing-data.ts';

const [csqaDir, macawDir] = process.argv.slice(2);
if (!csqaDir || !macawDir)
  throw new Error('usage: build-routing-fresh.ts <Rereading-LLM-Reasoning git dir> <macaw git dir>');

const CSQA_COMMIT = '0dbad50be663c2ea8c46334c2f9a086980d3e318';
const MACAW_COMMIT = '5a0b32b7879e39cb43551830833dcaed8e208773';
/** gpt-3.5-turbo, direct answer, question read once (the repository's results/README.md names it). */
const CSQA_FILE = 'results/commonsenseqa_topp1.0_temp0.0_majority1_readtimes1_20230912_002124.jsonl';
/** gpt-4o-mini on the same questions and prompt: only its miss count is recorded, as a reference. */
const CSQA_STRONG_FILE =
  'results/commonsenseqa_gpt-4o-mini-2024-07-18_topp1.0_temp0.0_majority1_readtimes1_20240926_224916.jsonl';
const MACAW_FILE = 'challenge300-outputs.tsv';
const MACAW_WEAK = 'GPT3-davinci';

const outDir = new URL('../test/data/routing/outcomes/', import.meta.url);
// Any prompt already in an outcome file or the labelled sets would not be unseen: dropped.
const seen = new Set<string>();
for (const file of [
  'mmlu-dev.jsonl',
  'mmlu-heldout.jsonl',
  'vicuna-dev.jsonl',
  'mt-bench.jsonl',
  'draw.jsonl',
  'code.jsonl',
  'arena-bench.jsonl',
])
  for (const l of readFileSync(new URL(file, outDir), 'utf8').split('\n').filter(Boolean))
    seen.add(normPrompt((JSON.parse(l) as { text: string }).text));
for (const file of ['labelled.jsonl', 'holdout.jsonl'])
  for (const l of readFileSync(new URL(`../${file}`, outDir), 'utf8')
    .split('\n')
    .filter(Boolean))
    for (const m of (JSON.parse(l) as { messages: { content: unknown }[] }).messages)
      if (typeof m.content === 'string') seen.add(normPrompt(m.content));

// --- CommonsenseQA ------------------------------------------------------------------------------
interface CsqaRow {
  question: { stem: string; choices: { label: string; text: string }[] };
  vanilla: { score: number };
}
const csqa: OutcomeOut[] = [];
for (const l of gitShow(csqaDir, CSQA_COMMIT, CSQA_FILE).split('\n').filter(Boolean)) {
  const r = JSON.parse(l) as CsqaRow;
  // The question as the model was asked it, without the "Q:" and answer-format wrapper.
  const options = r.question.choices.map((c) => `(${c.label}) ${c.text}`).join(' ');
  csqa.push({
    group: 'commonsenseqa',
    weakFails: r.vanilla.score !== 1,
    text: `${r.question.stem.trim()} Answer Choices: ${options}`,
  });
}

const csqaStrongMisses = gitShow(csqaDir, CSQA_COMMIT, CSQA_STRONG_FILE)
  .split('\n')
  .filter(Boolean)
  .filter((l) => (JSON.parse(l) as CsqaRow).vanilla.score !== 1).length;

// --- Challenge300 -------------------------------------------------------------------------------
// Every field is quoted (doubled quotes inside) or a bare number, and no field holds a tab.
const unquote = (f: string): string => (f.startsWith('"') ? f.slice(1, -1).replace(/""/g, '"') : f);
const [header, ...tsv] = gitShow(macawDir, MACAW_COMMIT, MACAW_FILE)
  .split('\n')
  .filter(Boolean)
  .map((l) => l.split('\t').map(unquote));
if (!header) throw new Error(`${MACAW_FILE} is empty`);
// Each model has an answer column and, after "Credits->", a human credit column (0, 0.5 or 1).
const creditCol = header.indexOf(`credit-${MACAW_WEAK}`);
const questionCol = header.indexOf('question');
const categoryCol = header.indexOf('category');
if (creditCol < 0 || questionCol < 0 || categoryCol < 0) throw new Error(`${MACAW_FILE}: unexpected header`);
const challenge: OutcomeOut[] = [];
for (const f of tsv) {
  const credit = Number(f[creditCol]);
  if (f.length !== header.length || !Number.isFinite(credit))
    throw new Error(`${MACAW_FILE}: bad row ${f[0]}`);
  challenge.push({
    group: (f[categoryCol] as string).replace(/\s+/g, '_'),
    weakFails: credit < 1,
    text: f[questionCol] as string,
  });
}

const write = (file: string, rows: OutcomeOut[]) => writeOutcomes(outDir, file, rows, seen);

const manifestUrl = new URL('MANIFEST.json', outDir);
const manifest = JSON.parse(readFileSync(manifestUrl, 'utf8')) as Record<string, unknown>;
const use =
  'unseen domain, test only: committed on 2026-11-25 before any routing model scored it; never trained, tuned or chosen on';
manifest.freshUnseen = [
  {
    file: 'commonsenseqa.jsonl',
    repo: 'github.com/Tebmer/Rereading-LLM-Reasoning',
    commit: CSQA_COMMIT,
    licence: 'Apache-2.0',
    files: [CSQA_FILE],
    label:
      'weakFails: gpt-3.5-turbo (Sept 2023, temperature 0, asked for the boxed choice without chain of thought) chose a wrong option',
    labelNote: `CommonsenseQA's answer key is partly disputable, so some failures are the key's: gpt-4o-mini, asked the same way (${CSQA_STRONG_FILE}), misses ${csqaStrongMisses} of ${csqa.length}`,
    ...write('commonsenseqa.jsonl', csqa),
    use,
    contentLicences: {
      "CommonsenseQA validation questions (Talmor et al. 2019, 'CommonsenseQA: A Question Answering Challenge Targeting Commonsense Knowledge')":
        'MIT (the dataset card of tau/commonsense_qa on Hugging Face)',
    },
    licenceNote: "'licence' is the Rereading repository's own (its results files)",
  },
  {
    file: 'challenge300.jsonl',
    repo: 'github.com/allenai/macaw',
    commit: MACAW_COMMIT,
    licence: 'Apache-2.0',
    files: [MACAW_FILE],
    label: `weakFails: a human grader gave ${MACAW_WEAK}'s zero-shot answer ("Q: <question>\\nA:", temperature 0) less than full credit (0 or 0.5 of 1)`,
    ...write('challenge300.jsonl', challenge),
    use,
    contentLicences: {
      'Challenge300 probes (Tafjord & Clark 2021, "General-Purpose Question-Answering with Macaw")':
        'Apache-2.0: written by AI2 and published in the same repository',
    },
  },
];
writeFileSync(manifestUrl, JSON.stringify(manifest, null, 1) + '\n');
for (const e of manifest.freshUnseen as {
  file: string;
  rows: number;
  weakFails: number;
  droppedAsOverlap: number;
}[])
  console.log(
    `${e.file}: ${e.rows} rows, weak model fails on ${e.weakFails}, ${e.droppedAsOverlap} overlapping dropped`,
  );
