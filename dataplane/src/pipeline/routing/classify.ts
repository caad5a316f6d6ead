/**
 * Difficulty classification for routing: a weighted sum of the features in features.ts,
 * cut into three levels. No model call; the reasons list every contribution so a debug log
 * shows why a request was routed where it was.
 *
 * The weights are deliberately asymmetric: signals of hard work (proofs, traces, design,
 * analysis) add a lot, signals of easy work subtract a little, and any hard signal forbids
 * `trivial`. Sending a hard prompt to the cheapest model costs more than the reverse.
 */
import type { ChatRequest } from '../../formats/openai/types.ts';
import { extractFeatures, type DifficultyFeatures } from './features.ts';
import { lastUserText, weakFailLogit } from './outcome.ts';
import { OUTCOME_WEIGHTS } from './outcome-weights.ts';

export type DifficultyLevel = 'trivial' | 'standard' | 'complex';

export interface Difficulty {
  level: DifficultyLevel;
  score: number;
  reasons: string[];
  /** Calibrated probability that a weak model fails the request (outcome.ts). */
  weakFails: number;
}

/** Below TRIVIAL_BELOW is trivial, at or above COMPLEX_FROM is complex. */
export const TRIVIAL_BELOW = 1;
export const COMPLEX_FROM = 3.75;
/** Hard-signal weight at which a request can no longer be trivial. */
const HARD_FLOOR = 0.6;

/** One term of the score; `hard` marks evidence of hard work, which rules out trivial. */
export interface Contribution {
  name: string;
  weight: number;
  hard: boolean;
}

const capped = (n: number, each: number, cap: number): number => Math.min(n * each, cap);
const list = (xs: string[]): string => xs.slice(0, 4).join(', ');

/** Length on a log scale: 10 words ≈ 0.5, 40 ≈ 1.6, 80+ words reach the cap. */
function lengthWeight(words: number): number {
  return words <= 5 ? 0 : Math.min(0.55 * Math.log2(words / 5), 2.2);
}

export function scoreFeatures(f: DifficultyFeatures): Contribution[] {
  const out: Contribution[] = [];
  const add = (name: string, weight: number, hard = false): void => {
    if (weight !== 0) out.push({ name, weight: Math.round(weight * 100) / 100, hard });
  };

  // Hard-work signals.
  if (f.proof.length) add(`proof requested (${list(f.proof)})`, 4, true);
  if (f.derive.length) add(`derivation requested (${list(f.derive)})`, 2.5, true);
  if (f.analysis.length)
    add(`asks for analysis (${list(f.analysis)})`, capped(f.analysis.length, 1, 3), true);
  if (f.design.length)
    add(`asks for design (${list(f.design)})`, Math.min(1.5 + 0.5 * f.design.length, 3), true);
  if (f.systems.length) add(`systems terms (${list(f.systems)})`, capped(f.systems.length, 0.6, 2.4), true);
  if (f.engineering.length)
    add(`engineering terms (${list(f.engineering)})`, capped(f.engineering.length, 0.6, 2.4), true);
  if (f.research.length)
    add(`research terms (${list(f.research)})`, capped(f.research.length, 0.6, 1.8), true);
  if (f.math.length) add(`maths terms (${list(f.math)})`, capped(f.math.length, 0.4, 1.6), true);
  if (f.mathNotation) add('maths notation', 0.8, true);
  if (f.sequence.length >= 2) add(`multi-step (${list(f.sequence)})`, f.sequence.length >= 3 ? 1.5 : 1, true);
  if (f.constraints.length >= 2)
    add(
      `constraints (${list(f.constraints)})`,
      Math.min(0.6 * Math.floor(f.constraints.length / 2), 1.8),
      true,
    );
  if (f.stackFrames >= 2) add(`stack trace (${f.stackFrames} frames)`, 2.5, true);
  else if (f.errorLines >= 3) add(`error log (${f.errorLines} lines)`, 1, true);
  else if (f.errorLines >= 1) add('error message', 0.5);
  if (f.codeBlocks >= 1) add(`code (${f.codeBlocks} blocks, ${f.codeLines} lines)`, 1, true);
  if (f.codeLines > 25) add('long code', 0.5, true);
  if (f.codeBlocks >= 3) add('several code artifacts', 1, true);

  // Shape of the ask.
  add(`length (${f.instructionWords} words)`, lengthWeight(f.instructionWords));
  if (f.listItems >= 3) add(`list of ${f.listItems} items`, f.listItems >= 6 ? 1.2 : 0.6);
  if (f.enumerations >= 1) add(`${f.enumerations} enumerations`, f.enumerations >= 2 ? 0.8 : 0.5);
  if (f.task.length >= 3) add(`several asks (${list(f.task)})`, 0.6);
  if (f.questions >= 2) add(`${f.questions} questions`, f.questions >= 4 ? 0.8 : 0.4);
  if (f.numbers >= 4) add(`${f.numbers} quantities`, f.numbers >= 8 ? 0.8 : 0.4);

  // Agents and conversations.
  if (f.tools > 0) add(`${f.tools} tools defined`, f.tools >= 4 ? 0.6 : 0.3);
  if (f.toolMessages > 0) add(`${f.toolMessages} tool results`, capped(f.toolMessages, 0.4, 1.6));
  if (f.toolErrors) add('tool result shows an error', 1, true);
  if (f.userTurns >= 3) add(`${f.userTurns} user turns`, f.userTurns >= 6 ? 0.6 : 0.3);
  if (f.historyChars > 6000) add('long history', 0.4);
  if (f.previousAnswerChars > 200 && !f.greeting) add('follows up on a substantial answer', 0.6);
  if (f.contextSignals.length && !f.greeting)
    add(`earlier turns (${list(f.contextSignals)})`, capped(f.contextSignals.length, 0.4, 1.2));

  // Easy-work signals, only when nothing hard was seen.
  const hard = out.filter((c) => c.hard).reduce((s, c) => s + c.weight, 0);
  const easy = hard < HARD_FLOOR;
  const shortTranslation = f.dataTask === 'translate' && f.words <= 40;
  if (f.dataTask === 'summarize') add('summary of given text', 1.2);
  else if (f.dataTask === 'translate' && !shortTranslation) add('translation of a passage', 1.2);
  else if (f.task.length && f.dataTask === null) add(`task (${list(f.task)})`, 1.2);
  if (f.dataTask && f.pastedWords > 150) add(`pasted text (${f.pastedWords} words)`, 0.4);
  if (easy && f.greeting) add('greeting or thanks', -2);
  if (easy && f.dataTask === 'transform') add('mechanical edit of given text', -1);
  if (easy && shortTranslation) add('short translation', -1);
  if (easy && f.lookup && !f.task.length && f.words <= 14) add('one-fact question', -0.6);
  if (f.brevity) add('short answer asked', -0.4);
  return out;
}

/**
 * The outcome model's say in the score: its log-odds that a weak model fails, above or below
 * the training base rate, scaled and bounded so that it moves the score by about one level at
 * most and never overrides a greeting or a hard signal on its own.
 */
export const OUTCOME_SCALE = 1.5;
const OUTCOME_MIN = 0;
const OUTCOME_MAX = 2;
const BASE_LOGIT = Math.log(OUTCOME_WEIGHTS.baseRate / (1 - OUTCOME_WEIGHTS.baseRate));

/**
 * The outcome model's say in the level: at this calibrated probability (Platt-scaled on MMLU
 * dev subjects) that the weak model fails, a request is complex whatever the rules scored.
 * It only ever raises the level, so the rules' guarantee (complex never trivial) holds.
 * Chosen by test/eval/routing-thresholds.ts: the best mean level AUC on the dev sets among
 * thresholds that cost the labelled set at most two points of accuracy.
 */
export const OUTCOME_COMPLEX_FROM = 0.3;

export function outcomeContribution(z: number): Contribution {
  const weight = Math.min(Math.max(OUTCOME_SCALE * (z - BASE_LOGIT), OUTCOME_MIN), OUTCOME_MAX);
  const p = 1 / (1 + Math.exp(-z));
  return { name: `weak model fails p=${p.toFixed(2)}`, weight: Math.round(weight * 100) / 100, hard: false };
}

/** `complexFrom` overrides OUTCOME_COMPLEX_FROM (for the sweep that chose it; 1 turns it off). */
export function classifyDifficulty(req: ChatRequest, complexFrom = OUTCOME_COMPLEX_FROM): Difficulty {
  const features = extractFeatures(req);
  const contributions = scoreFeatures(features);
  const z = weakFailLogit(features, lastUserText(req));
  const weakFails = 1 / (1 + Math.exp(-z));
  const outcome = outcomeContribution(z);
  // Listed even at weight 0: the probability is what a debug log most needs to show.
  contributions.push(outcome);
  const score = Math.round(contributions.reduce((s, c) => s + c.weight, 0) * 100) / 100;
  const hard = contributions.filter((c) => c.hard).reduce((s, c) => s + c.weight, 0);
  let level: DifficultyLevel =
    score >= COMPLEX_FROM ? 'complex' : score < TRIVIAL_BELOW ? 'trivial' : 'standard';
  const reasons = contributions
    .slice()
    .sort((a, b) => Math.abs(b.weight) - Math.abs(a.weight))
    .map((c) => `${c.name} ${c.weight > 0 ? '+' : ''}${c.weight}`);
  if (level === 'trivial' && hard >= HARD_FLOOR) {
    level = 'standard';
    reasons.push('hard signals rule out trivial');
  }
  if (level !== 'complex' && weakFails >= complexFrom) {
    level = 'complex';
    reasons.push(`weak model likely fails (p=${weakFails.toFixed(2)} >= ${complexFrom})`);
  }
  return { level, score, reasons, weakFails };
}
