/**
 * The seven seen routing outcome domains, as the leave-one-domain-out trainers read them
 * (train-routing-static.ts, train-routing-items.ts): RouteLLM MMLU training subjects (the same
 * subject split as scripts/train-routing.ts; dev subjects are returned apart, test subjects are
 * never opened), FastChat's Vicuna bench and the files of scripts/build-routing-wide.ts
 * (BIG-Bench Hard, SVAMP, APPS, the DRAW-1K and HumanEval/MBPP training quarters). No test
 * split, no unseen domain.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parseCsv } from './routing-data.ts';

export const SEEN_DOMAINS = ['mmlu', 'vicuna', 'bbh', 'svamp', 'apps', 'draw', 'code'] as const;
export type SeenDomain = (typeof SEEN_DOMAINS)[number];
/** Domains the shipped weights were trained on: their shipped-model AUC is in-sample. */
export const SHIPPED_TRAINED_ON: ReadonlySet<SeenDomain> = new Set<SeenDomain>(['mmlu', 'vicuna']);

export interface SeenRow {
  text: string;
  weakFails: boolean;
  /** Sub-task: MMLU subject file, BIG-Bench Hard task, the file's own group elsewhere. */
  group: string;
}

const ROUTE_COMMIT = '0b64fdafe049e596a3f5657c219329f24af24198';
const WEAK = 'mistralai/Mixtral-8x7B-Instruct-v0.1';
const FILES: Record<Exclude<SeenDomain, 'mmlu'>, string> = {
  vicuna: 'vicuna-dev.jsonl',
  bbh: 'wide/bbh.jsonl',
  svamp: 'wide/svamp.jsonl',
  apps: 'wide/apps.jsonl',
  draw: 'wide/draw-train.jsonl',
  code: 'wide/code-train.jsonl',
};

export function loadSeenDomains(routeLlmDir: string): {
  rowsOf: Record<SeenDomain, SeenRow[]>;
  mmluDev: SeenRow[];
} {
  const routeGit = (...a: string[]): string =>
    execFileSync('git', ['--git-dir', routeLlmDir, ...a], { encoding: 'utf8', maxBuffer: 1 << 28 });
  const mmlu: SeenRow[] = [];
  const mmluDev: SeenRow[] = [];
  let trainIndex = 0;
  routeGit('ls-tree', '--name-only', ROUTE_COMMIT, 'routellm/evals/mmlu/responses/')
    .split('\n')
    .filter((f) => f.endsWith('.csv'))
    .sort()
    .forEach((file, i) => {
      // Every fourth subject is the test split: not even opened.
      if (i % 4 === 3) return;
      const into = trainIndex++ % 8 === 1 ? mmluDev : mmlu;
      const [header, ...csv] = parseCsv(routeGit('show', `${ROUTE_COMMIT}:${file}`));
      const wi = header?.indexOf(WEAK) ?? -1;
      if (wi < 0) throw new Error(`${file}: no ${WEAK} column`);
      for (const r of csv)
        if (r.length >= 3)
          into.push({
            text: (r[0] as string).replace(/\nAnswer:\s*$/, ''),
            weakFails: r[wi] === 'False',
            group: file,
          });
    });
  const rowsOf = { mmlu } as Record<SeenDomain, SeenRow[]>;
  for (const d of SEEN_DOMAINS)
    if (d !== 'mmlu')
      rowsOf[d] = readFileSync(new URL(`../test/data/routing/outcomes/${FILES[d]}`, import.meta.url), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => {
          const r = JSON.parse(l) as SeenRow;
          return { text: r.text, weakFails: r.weakFails, group: r.group };
        });
  return { rowsOf, mmluDev };
}
