/**
 * Writes two evaluation-only routing outcome sets and records their sources in
 * test/data/routing/outcomes/MANIFEST.json (key `evalOnly`):
 *
 *   npx tsx scripts/build-routing-domains.ts <lab-v2/ChatGPT_MWP_eval git dir> \
 *     <zaiyichen0411/MapCoder-Reproduction git dir>
 *
 * - draw.jsonl: all of DRAW-1K's algebra word problems; weakFails = ChatGPT (Feb 2023, showing
 *   its working) did not return every answer (a half-solved system fails the user too).
 * - code.jsonl: all of HumanEval and MBPP; weakFails = Qwen-Coder-Turbo, asked directly (no
 *   agent loop), failed the problem's tests.
 *
 * The shipped outcome model was trained on MMLU and the Vicuna bench only, and no choice of
 * configuration or threshold is made on these sets, so both are whole unseen domains for it.
 * scripts/train-routing.ts and test/eval/routing-thresholds.ts do not read them.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { gitShow, normPrompt, writeOutcomes, type OutcomeOut } from './routing-data.ts';

const [drawDir, codeDir] = process.argv.slice(2);
if (!drawDir || !codeDir)
  throw new Error(
    'usage: build-routing-domains.ts <ChatGPT_MWP_eval git dir> <MapCoder-Reproduction git dir>',
  );

const DRAW_COMMIT = '2a6e215b7b621d309c02a23b92908548eb90b096';
const CODE_COMMIT = '52084c79d7eee395a87165319208f280845940ea';
const DRAW_DATA = 'data_with_implementation/data';
const DRAW_FILES = [`${DRAW_DATA}/draw.json`, `${DRAW_DATA}/chatgpt_plus_results_feb.json`] as const;
const CODE_FILES = [
  ['humaneval', 'results/HumanEval/QwenCoderTurbo-Direct-HumanEval-Python3-0.0-1-merged.jsonl'],
  ['mbpp', 'results/MBPP/QwenCoderTurbo-Direct-MBPP-Python3-0.0-1-merged.jsonl'],
] as const;

const outDir = new URL('../test/data/routing/outcomes/', import.meta.url);
// A prompt the model trained or was tuned on would not be unseen: such rows are dropped.
const seen = new Set<string>();
for (const file of ['mmlu-dev.jsonl', 'vicuna-dev.jsonl'])
  for (const l of readFileSync(new URL(file, outDir), 'utf8').split('\n').filter(Boolean))
    seen.add(normPrompt((JSON.parse(l) as { text: string }).text));

// --- DRAW-1K ------------------------------------------------------------------------------------
const drawQuestions = JSON.parse(gitShow(drawDir, DRAW_COMMIT, DRAW_FILES[0])) as { sQuestion: string }[];
const drawResults = JSON.parse(gitShow(drawDir, DRAW_COMMIT, DRAW_FILES[1])) as {
  question_No: number;
  result: string;
}[];
const SOLVED = new Set(['has all the answers', 'has all the answers when rounded']);
const draw: OutcomeOut[] = [];
for (const r of drawResults) {
  const q = drawQuestions[r.question_No];
  if (!q) continue;
  draw.push({ group: 'draw1k', weakFails: !SOLVED.has(r.result.trim()), text: q.sQuestion });
}

// --- HumanEval and MBPP -------------------------------------------------------------------------
const code: OutcomeOut[] = [];
for (const [group, file] of CODE_FILES)
  for (const l of gitShow(codeDir, CODE_COMMIT, file).split('\n').filter(Boolean)) {
    const r = JSON.parse(l) as { prompt: string; is_solved: boolean | string };
    code.push({ group, weakFails: r.is_solved !== true && String(r.is_solved) !== 'True', text: r.prompt });
  }

const write = (file: string, rows: OutcomeOut[]) => writeOutcomes(outDir, file, rows, seen);

const manifestUrl = new URL('MANIFEST.json', outDir);
const manifest = JSON.parse(readFileSync(manifestUrl, 'utf8')) as Record<string, unknown>;
const use = 'evaluation only, whole set: the shipped model never trained on it and no choice was made on it';
manifest.evalOnly = [
  {
    file: 'draw.jsonl',
    repo: 'github.com/lab-v2/ChatGPT_MWP_eval',
    commit: DRAW_COMMIT,
    licence: 'CC0-1.0',
    files: [...DRAW_FILES],
    label:
      'weakFails: ChatGPT (Feb 2023, with working) did not return every answer of a DRAW-1K algebra word problem (partial answers fail)',
    ...write('draw.jsonl', draw),
    use,
    contentLicences: {
      "DRAW-1K problems (Upadhyay & Chang 2017, 'Annotating Derivations: A New Evaluation Strategy and Dataset for Algebra Word Problems')":
        "not stated in the source repository; the repository's CC0 covers its own files. Used for evaluation only, never trained on",
    },
    licenceNote: "'licence' is the lab-v2 repository's own",
  },
  {
    file: 'code.jsonl',
    repo: 'github.com/zaiyichen0411/MapCoder-Reproduction',
    commit: CODE_COMMIT,
    licence: 'MIT',
    files: CODE_FILES.map(([, f]) => f),
    label: 'weakFails: Qwen-Coder-Turbo, asked directly, failed the HumanEval / MBPP problem tests',
    ...write('code.jsonl', code),
    use,
    contentLicences: {
      'HumanEval problems (openai/human-eval)': 'MIT',
      "MBPP problems (google-research/mbpp; Austin et al. 2021, 'Program Synthesis with Large Language Models')":
        'CC-BY-4.0: attribution required, given here and in the README',
    },
    licenceNote:
      "'licence' is the MapCoder repository's own (its results files); the problem texts inside keep their datasets' licences",
  },
];
writeFileSync(manifestUrl, JSON.stringify(manifest, null, 1) + '\n');
for (const e of manifest.evalOnly as { file: string; rows: number; weakFails: number }[])
  console.log(`${e.file}: ${e.rows} rows, weak model fails on ${e.weakFails}`);
