/**
 * Writes the extra TRAINING domains of the wide routing outcome model
 * (scripts/train-routing-wide.ts) to test/data/routing/outcomes/wide/, with their sources in
 * wide/MANIFEST.json:
 *
 *   npx tsx scripts/build-routing-wide.ts <suzgunmirac/BIG-Bench-Hard git dir> \
 *     <Tebmer/Rereading-LLM-Reasoning git dir> <zaiyichen0411/MapCoder-Reproduction git dir> \
 *     <lab-v2/ChatGPT_MWP_eval git dir>
 *
 * - bbh.jsonl: the 27 BIG-Bench Hard tasks; weakFails = code-davinci-002, answer-only
 *   (few-shot, no chain of thought), did not give the target.
 * - svamp.jsonl: SVAMP arithmetic word problems; weakFails = gpt-4o-mini, asked directly
 *   (no re-reading), got the number wrong. Only the svamp result file of that repository is
 *   read: its CommonsenseQA files are a reserved unseen domain and its GSM8K files are not used.
 * - apps.jsonl: APPS programming problems; weakFails = QwenCoder480b (Qwen-Coder 480B), asked directly, failed
 *   the tests.
 * - draw-train.jsonl, code-train.jsonl: the three quarters of DRAW-1K and of HumanEval/MBPP that
 *   the earlier retrain trained on (the same split: question number / line index mod 4 != 3),
 *   read from the source repositories. A model trained on them no longer has DRAW-1K or code as
 *   unseen domains; the remaining quarters are never written here.
 *
 * Rows whose prompt is in a test split (MMLU test subjects, MT-bench) or in the labelled routing
 * sets are dropped, and each domain keeps a prompt once (its first outcome).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { gitShow, normPrompt, type OutcomeOut } from './routing-data.ts';

const [bbhDir, rereadDir, mapcoderDir, drawDir] = process.argv.slice(2);
if (!bbhDir || !rereadDir || !mapcoderDir || !drawDir)
  throw new Error(
    'usage: build-routing-wide.ts <BIG-Bench-Hard> <Rereading-LLM-Reasoning> <MapCoder-Reproduction> <ChatGPT_MWP_eval> (git dirs)',
  );

const BBH_COMMIT = '9ee07bd481feebf959a6b59d61ea57bdcf30964d';
const REREAD_COMMIT = '0dbad50be663c2ea8c46334c2f9a086980d3e318';
const MAPCODER_COMMIT = '52084c79d7eee395a87165319208f280845940ea';
const DRAW_COMMIT = '2a6e215b7b621d309c02a23b92908548eb90b096';

const git = (dir: string, ...args: string[]): string =>
  execFileSync('git', ['--git-dir', dir, ...args], { encoding: 'utf8', maxBuffer: 1 << 28 });

const outcomes = new URL('../test/data/routing/outcomes/', import.meta.url);
const outDir = new URL('wide/', outcomes);
mkdirSync(outDir, { recursive: true });

// Prompts of the test splits and the labelled sets stay out of training.
const held = new Set<string>();
for (const file of ['mmlu-heldout.jsonl', 'mt-bench.jsonl'])
  for (const l of readFileSync(new URL(file, outcomes), 'utf8').split('\n').filter(Boolean))
    held.add(normPrompt((JSON.parse(l) as { text: string }).text));
for (const file of ['labelled.jsonl', 'holdout.jsonl'])
  for (const l of readFileSync(new URL(`../${file}`, outcomes), 'utf8')
    .split('\n')
    .filter(Boolean))
    for (const m of (JSON.parse(l) as { messages: { content: unknown }[] }).messages)
      if (typeof m.content === 'string') held.add(normPrompt(m.content));

// --- BIG-Bench Hard, code-davinci-002 answer-only ------------------------------------------------
const BBH_DIRECT = 'code-davinci-002-outputs/code-davinci-002-direct';
const bbhFiles = git(bbhDir, 'ls-tree', '--name-only', BBH_COMMIT, `${BBH_DIRECT}/`)
  .split('\n')
  .filter((f) => f.endsWith('_few_shot_template_0-255000.json'))
  .sort();
const bbh: OutcomeOut[] = [];
for (const file of bbhFiles) {
  const task = file.slice(BBH_DIRECT.length + 1).replace(/_few_shot_template_0-255000\.json$/, '');
  const { outputs } = JSON.parse(gitShow(bbhDir, BBH_COMMIT, file)) as {
    outputs: { input: string; prediction: string; target: string }[];
  };
  for (const o of outputs) {
    // The logged input is the few-shot prompt; the user's question is its last "Q:" block.
    const at = o.input.lastIndexOf('\n\nQ: ');
    const text = (at >= 0 ? o.input.slice(at + 5) : o.input).replace(/\nA:\s*$/, '').trim();
    const fails = o.prediction.trim().toLowerCase() !== o.target.trim().toLowerCase();
    bbh.push({ group: task, weakFails: fails, text });
  }
}

// --- SVAMP, gpt-4o-mini asked directly -------------------------------------------------------------
const SVAMP_FILE =
  'results/svamp_gpt-4o-mini-2024-07-18_topp1.0_temp0.0_majority1_readtimes1_20240926_223003_eval.jsonl';
const svamp: OutcomeOut[] = gitShow(rereadDir, REREAD_COMMIT, SVAMP_FILE)
  .split('\n')
  .filter(Boolean)
  .map((l) => {
    const r = JSON.parse(l) as { input: string; vanilla: { score: number } };
    return { group: 'svamp', weakFails: r.vanilla.score !== 1, text: r.input };
  });

// --- APPS, Qwen3-Coder-480B asked directly ---------------------------------------------------------
const APPS_FILE = 'results/APPS/QwenCoder480b-Direct-APPS-Python3-0.0-1-merged.jsonl';
const apps: OutcomeOut[] = gitShow(mapcoderDir, MAPCODER_COMMIT, APPS_FILE)
  .split('\n')
  .filter(Boolean)
  .map((l) => {
    const r = JSON.parse(l) as { description: string; difficulty: string; is_solved: boolean | string };
    return {
      group: r.difficulty,
      weakFails: r.is_solved !== true && String(r.is_solved) !== 'True',
      text: r.description,
    };
  });

// --- DRAW-1K and HumanEval/MBPP: the retrain's three training quarters ---------------------------
const DRAW_DATA = 'data_with_implementation/data';
const DRAW_FILES = [`${DRAW_DATA}/draw.json`, `${DRAW_DATA}/chatgpt_plus_results_feb.json`] as const;
const drawQuestions = JSON.parse(gitShow(drawDir, DRAW_COMMIT, DRAW_FILES[0])) as { sQuestion: string }[];
const drawResults = JSON.parse(gitShow(drawDir, DRAW_COMMIT, DRAW_FILES[1])) as {
  question_No: number;
  result: string;
}[];
const SOLVED = new Set(['has all the answers', 'has all the answers when rounded']);
const drawTrain: OutcomeOut[] = [];
for (const r of drawResults) {
  const q = drawQuestions[r.question_No];
  if (!q || r.question_No % 4 === 3) continue;
  drawTrain.push({ group: 'draw1k', weakFails: !SOLVED.has(r.result.trim()), text: q.sQuestion });
}
const CODE_FILES = [
  ['humaneval', 'results/HumanEval/QwenCoderTurbo-Direct-HumanEval-Python3-0.0-1-merged.jsonl'],
  ['mbpp', 'results/MBPP/QwenCoderTurbo-Direct-MBPP-Python3-0.0-1-merged.jsonl'],
] as const;
const codeTrain: OutcomeOut[] = [];
for (const [group, file] of CODE_FILES)
  gitShow(mapcoderDir, MAPCODER_COMMIT, file)
    .split('\n')
    .filter(Boolean)
    .forEach((l, i) => {
      if (i % 4 === 3) return;
      const r = JSON.parse(l) as { prompt: string; is_solved: boolean | string };
      codeTrain.push({
        group,
        weakFails: r.is_solved !== true && String(r.is_solved) !== 'True',
        text: r.prompt,
      });
    });

const write = (
  file: string,
  rows: OutcomeOut[],
): { rows: number; weakFails: number; droppedAsHeld: number; droppedAsRepeat: number } => {
  const kept: OutcomeOut[] = [];
  const own = new Set<string>();
  let droppedAsHeld = 0;
  let droppedAsRepeat = 0;
  for (const r of rows) {
    const key = normPrompt(r.text);
    if (held.has(key)) droppedAsHeld++;
    else if (own.has(key)) droppedAsRepeat++;
    else {
      own.add(key);
      kept.push(r);
    }
  }
  writeFileSync(new URL(file, outDir), kept.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return {
    rows: kept.length,
    weakFails: kept.filter((r) => r.weakFails).length,
    droppedAsHeld,
    droppedAsRepeat,
  };
};

const use = 'training domain of the wide outcome model (scripts/train-routing-wide.ts)';
const domains = [
  {
    file: 'bbh.jsonl',
    repo: 'github.com/suzgunmirac/BIG-Bench-Hard',
    commit: BBH_COMMIT,
    licence: 'MIT',
    files: [`${BBH_DIRECT}/*_few_shot_template_0-255000.json`],
    label:
      'weakFails: code-davinci-002, answer-only (3-shot, no chain of thought), did not give the target (case-insensitive exact match)',
    contentLicences: {
      'BIG-Bench Hard tasks (Suzgun et al. 2022, from BIG-bench, Srivastava et al. 2022)':
        'MIT (the BIG-Bench-Hard repository); BIG-bench tasks Apache-2.0',
    },
    ...write('bbh.jsonl', bbh),
    use,
  },
  {
    file: 'svamp.jsonl',
    repo: 'github.com/Tebmer/Rereading-LLM-Reasoning',
    commit: REREAD_COMMIT,
    licence: 'Apache-2.0',
    files: [SVAMP_FILE],
    label: 'weakFails: gpt-4o-mini (temperature 0, asked directly, "vanilla") got the SVAMP answer wrong',
    contentLicences: {
      'SVAMP (Patel et al. 2021, "Are NLP Models really able to Solve Simple Math Word Problems?")': 'MIT',
    },
    notRead: 'results/commonsenseqa_* (reserved unseen domain), results/gsm_* (GSM8K is not used)',
    ...write('svamp.jsonl', svamp),
    use,
  },
  {
    file: 'apps.jsonl',
    repo: 'github.com/zaiyichen0411/MapCoder-Reproduction',
    commit: MAPCODER_COMMIT,
    licence: 'MIT',
    files: [APPS_FILE],
    label:
      'weakFails: QwenCoder480b (Qwen-Coder 480B, as the result files name it), asked directly (no agent loop), failed the APPS problem tests',
    contentLicences: {
      'APPS (Hendrycks et al. 2021, "Measuring Coding Challenge Competence With APPS")': 'MIT',
    },
    ...write('apps.jsonl', apps),
    use,
  },
  {
    file: 'draw-train.jsonl',
    repo: 'github.com/lab-v2/ChatGPT_MWP_eval',
    commit: DRAW_COMMIT,
    licence: 'CC0-1.0',
    files: [...DRAW_FILES],
    label:
      'weakFails: ChatGPT (Feb 2023, with working) did not return every answer of a DRAW-1K algebra word problem; question_No % 4 != 3 only',
    contentLicences: {
      'DRAW-1K problems (Upadhyay & Chang 2017)':
        "not stated in the source repository; the repository is CC0. Trained on as the earlier retrain was, at the lead's request",
    },
    ...write('draw-train.jsonl', drawTrain),
    use,
  },
  {
    file: 'code-train.jsonl',
    repo: 'github.com/zaiyichen0411/MapCoder-Reproduction',
    commit: MAPCODER_COMMIT,
    licence: 'MIT',
    files: CODE_FILES.map(([, f]) => f),
    label:
      'weakFails: Qwen-Coder-Turbo, asked directly, failed the HumanEval / MBPP tests; line index % 4 != 3 only',
    contentLicences: {
      'HumanEval problems (openai/human-eval)': 'MIT',
      'MBPP problems (Austin et al. 2021)': 'CC-BY-4.0: attribution required, given here',
    },
    ...write('code-train.jsonl', codeTrain),
    use,
  },
];
const manifest = {
  domains,
  notUsed: [
    {
      repo: 'github.com/allenai/WildBench',
      commit: 'd6b8dcaf377d173d031980f97c16e1a82618c03d',
      why: 'the tasks are WildChat conversations under the AI2 ImpACT Low-Risk licence (not an open licence), and the eval_results files carry session ids, not the prompts',
    },
    {
      repo: 'github.com/openai/prm800k',
      commit: '7ecc794703b2877f63226f2477a49b34f9b25163',
      why: 'its data files are Git LFS pointers in the snapshot; the graded solutions are not there',
    },
    {
      repo: 'github.com/kojima-takeshi188/zero_shot_cot',
      commit: '5ef330fcdeec0cd26aee27943504f91f8ec1c33c',
      why: 'per-question logs (StrategyQA, AQuA, coin flip, ...) but the repository has no licence',
    },
    {
      repo: 'github.com/tatsu-lab/alpaca_eval',
      commit: 'cd543a149df89434d8a54582c0151c0b945c3d20',
      why: 'its preference label follows answer richness, not failure (dropped before; no failure label found)',
    },
  ],
};
writeFileSync(new URL('MANIFEST.json', outDir), JSON.stringify(manifest, null, 1) + '\n');
for (const d of domains)
  console.log(
    `${d.file}: ${d.rows} rows, weak model fails on ${d.weakFails}; dropped ${d.droppedAsHeld} held-out, ${d.droppedAsRepeat} repeats`,
  );
