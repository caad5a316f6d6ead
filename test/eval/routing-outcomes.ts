/**
 * The outcome sets of test/data/routing/outcomes (see its MANIFEST.json) and the AUCs the
 * routing evaluation reports on them, shared by routing-auc.ts and routing-thresholds.ts.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ChatRequest } from '../../dataplane/src/formats/openai/types.ts';
import { auc } from '../../dataplane/src/pipeline/routing/auc.ts';
import { classifyDifficulty, type DifficultyLevel } from '../../dataplane/src/pipeline/routing/classify.ts';

export interface OutcomeRow {
  group: string;
  weakFails: boolean;
  text: string;
}

/** Every split, with what it was used for (so the report never mixes them up). */
export const OUTCOME_SPLITS = [
  { file: 'mmlu-dev.jsonl', name: 'MMLU dev subjects', role: 'dev: model choice and calibration' },
  {
    file: 'vicuna-dev.jsonl',
    name: 'Vicuna bench',
    role: 'trained on (category-held-out AUC chose the config)',
  },
  { file: 'mmlu-heldout.jsonl', name: 'MMLU test subjects', role: 'test' },
  {
    file: 'mt-bench.jsonl',
    name: 'MT-bench first turns',
    role: 'test; no choice made on it, but looked at about nine times',
  },
  {
    file: 'draw.jsonl',
    name: 'DRAW-1K word problems, whole',
    role: 'unseen domain: never trained on, no choice made on it',
  },
  {
    file: 'code.jsonl',
    name: 'HumanEval + MBPP, whole',
    role: 'unseen domain: never trained on, no choice made on it',
  },
  {
    file: 'arena-bench.jsonl',
    name: 'Arena-Bench-V1',
    role: 'test, unseen domain: committed before training, never used for a choice',
  },
  {
    file: 'wide/bbh.jsonl',
    name: 'BIG-Bench Hard, 27 tasks',
    role: 'never trained on by the shipped model; scored once before, in the wide-training comparison',
  },
  {
    file: 'wide/svamp.jsonl',
    name: 'SVAMP word problems',
    role: 'never trained on by the shipped model; scored once before, in the wide-training comparison',
  },
  {
    file: 'wide/apps.jsonl',
    name: 'APPS programming problems',
    role: 'never trained on by the shipped model; scored once before, in the wide-training comparison',
  },
  {
    file: 'commonsenseqa.jsonl',
    name: 'CommonsenseQA validation',
    role: 'test, fresh unseen domain: committed before any model scored it, never used for a choice',
  },
  {
    file: 'challenge300.jsonl',
    name: 'Challenge300 probes',
    role: 'test, fresh unseen domain: committed before any model scored it, never used for a choice',
  },
] as const;

export const loadOutcomes = (file: string): OutcomeRow[] =>
  readFileSync(fileURLToPath(new URL(`../data/routing/outcomes/${file}`, import.meta.url)), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as OutcomeRow);

export const asRequest = (text: string): ChatRequest => ({
  model: 'eval',
  messages: [{ role: 'user', content: text }],
});

const RANK: Record<DifficultyLevel, number> = { trivial: 0, standard: 1, complex: 2 };

export interface OutcomeAucs {
  /** The calibrated probability alone, and its 95 % bootstrap interval. */
  probability: number;
  probabilityInterval: [number, number];
  /** The classifier's continuous score (rules plus the outcome term). */
  score: number;
  /** The routing level as an ordinal (trivial < standard < complex): what routing acts on. */
  level: number;
  /** Share of prompts per level. */
  levels: Record<DifficultyLevel, number>;
}

export function outcomeAucs(rows: OutcomeRow[], complexFrom?: number): OutcomeAucs {
  const y = rows.map((r) => r.weakFails);
  const d = rows.map((r) => classifyDifficulty(asRequest(r.text), complexFrom));
  const levels = { trivial: 0, standard: 0, complex: 0 };
  for (const x of d) levels[x.level] += 1 / rows.length;
  const p = d.map((x) => x.weakFails);
  return {
    probability: auc(p, y),
    probabilityInterval: aucInterval(p, y),
    score: auc(
      d.map((x) => x.score),
      y,
    ),
    level: auc(
      d.map((x) => RANK[x.level]),
      y,
    ),
    levels,
  };
}

/**
 * 95 % bootstrap interval of an AUC (1,000 resamples, fixed seed): on 80 prompts one AUC
 * point is about ±0.07, which a reader should see next to the figure.
 */
export function aucInterval(scores: readonly number[], positive: readonly boolean[]): [number, number] {
  let seed = 0x9e3779b9;
  const next = (): number => {
    // mulberry32: a small deterministic generator, enough for resampling indices.
    seed = (seed + 0x6d2b79f5) >>> 0;
    let t = seed;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const n = scores.length;
  const aucs: number[] = [];
  for (let b = 0; b < 1000; b++) {
    const s: number[] = [];
    const y: boolean[] = [];
    for (let i = 0; i < n; i++) {
      const k = Math.floor(next() * n);
      s.push(scores[k] as number);
      y.push(positive[k] === true);
    }
    const a = auc(s, y);
    if (!Number.isNaN(a)) aucs.push(a);
  }
  aucs.sort((x, z) => x - z);
  return [
    aucs[Math.floor(0.025 * aucs.length)] ?? Number.NaN,
    aucs[Math.floor(0.975 * aucs.length)] ?? Number.NaN,
  ];
}
