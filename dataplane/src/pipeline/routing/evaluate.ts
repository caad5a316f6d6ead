/**
 * Measures the classifier against a labelled set: confusion matrix, per-level precision and
 * recall, accuracy, hard prompts sent to the cheapest level, and classification time. Shared
 * by the eval script (test/eval/routing-eval.ts) and the regression test.
 */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { ChatMessage, ToolDefinition } from '../../formats/openai/types.ts';
import { classifyDifficulty, type Difficulty, type DifficultyLevel } from './classify.ts';

export const LEVELS: readonly DifficultyLevel[] = ['trivial', 'standard', 'complex'];

export interface LabelledPrompt {
  id: string;
  level: DifficultyLevel;
  messages: ChatMessage[];
  tools?: ToolDefinition[];
}

export interface Miss {
  id: string;
  expected: DifficultyLevel;
  got: Difficulty;
}

export interface Evaluation {
  total: number;
  /** confusion[expected][predicted] */
  confusion: Record<DifficultyLevel, Record<DifficultyLevel, number>>;
  precision: Record<DifficultyLevel, number>;
  recall: Record<DifficultyLevel, number>;
  accuracy: number;
  complexToTrivial: number;
  timingMs: { p50: number; p99: number; max: number };
  misses: Miss[];
}

function isLevel(v: unknown): v is DifficultyLevel {
  return v === 'trivial' || v === 'standard' || v === 'complex';
}

export function loadLabelled(path: string): LabelledPrompt[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line, i) => {
      const row = JSON.parse(line) as Partial<LabelledPrompt>;
      if (typeof row.id !== 'string' || !isLevel(row.level) || !Array.isArray(row.messages))
        throw new Error(`${path}:${i + 1}: needs id, level and messages`);
      return row as LabelledPrompt;
    });
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

const grid = (): Record<DifficultyLevel, number> => ({ trivial: 0, standard: 0, complex: 0 });

/**
 * Each prompt is classified `rounds` times for timing; the decision of the first round counts.
 * `complexFrom` overrides the outcome threshold of classify.ts (for the sweep that chose it).
 */
export function evaluate(prompts: LabelledPrompt[], rounds = 5, complexFrom?: number): Evaluation {
  const confusion = { trivial: grid(), standard: grid(), complex: grid() };
  const times: number[] = [];
  const misses: Miss[] = [];
  // Warm up first: regex compilation and JIT happen once per process, not per request.
  for (const p of prompts) classifyDifficulty({ model: 'eval', messages: p.messages }, complexFrom);
  for (const p of prompts) {
    const req = { model: 'eval', messages: p.messages, ...(p.tools ? { tools: p.tools } : {}) };
    let got: Difficulty | undefined;
    for (let r = 0; r < rounds; r++) {
      const start = performance.now();
      const d = classifyDifficulty(req, complexFrom);
      times.push(performance.now() - start);
      got ??= d;
    }
    if (!got) continue;
    confusion[p.level][got.level] += 1;
    if (got.level !== p.level) misses.push({ id: p.id, expected: p.level, got });
  }
  const precision = grid();
  const recall = grid();
  let correct = 0;
  for (const l of LEVELS) {
    const predicted = LEVELS.reduce((s, e) => s + confusion[e][l], 0);
    const actual = LEVELS.reduce((s, g) => s + confusion[l][g], 0);
    precision[l] = predicted ? confusion[l][l] / predicted : 0;
    recall[l] = actual ? confusion[l][l] / actual : 0;
    correct += confusion[l][l];
  }
  times.sort((a, b) => a - b);
  return {
    total: prompts.length,
    confusion,
    precision,
    recall,
    accuracy: prompts.length ? correct / prompts.length : 0,
    complexToTrivial: confusion.complex.trivial,
    timingMs: { p50: percentile(times, 50), p99: percentile(times, 99), max: times.at(-1) ?? 0 },
    misses,
  };
}

const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;

export function formatEvaluation(e: Evaluation): string {
  const pad = (s: string, n = 10): string => s.padStart(n);
  const lines = [
    `prompts: ${e.total}`,
    '',
    `confusion (rows: labelled, columns: predicted)`,
    `${pad('', 10)}${LEVELS.map((l) => pad(l)).join('')}`,
    ...LEVELS.map((l) => `${pad(l)}${LEVELS.map((p) => pad(String(e.confusion[l][p]))).join('')}`),
    '',
    `${pad('')}${pad('precision', 11)}${pad('recall')}`,
    ...LEVELS.map((l) => `${pad(l)}${pad(pct(e.precision[l]), 11)}${pad(pct(e.recall[l]))}`),
    '',
    `accuracy: ${pct(e.accuracy)}`,
    `complex -> trivial: ${e.complexToTrivial}`,
    `classification time: p50 ${e.timingMs.p50.toFixed(3)} ms, p99 ${e.timingMs.p99.toFixed(3)} ms, max ${e.timingMs.max.toFixed(3)} ms`,
  ];
  return lines.join('\n');
}
