/**
 * The outcome model: the probability that a weak model (Mixtral-8x7B in the training data)
 * answers the last user turn wrongly, from a logistic regression over outcome-features.ts.
 * Trained by scripts/train-routing.ts on RouteLLM's MMLU outcomes (which of a weak and a
 * strong model answered correctly); the weights live in outcome-weights.ts. No model call.
 */
import type { ChatRequest } from '../../formats/openai/types.ts';
import { lastUserIndex, textOf, type DifficultyFeatures } from './features.ts';
import { denseFeatures, hashedBuckets, HASH_BUCKETS } from './outcome-features.ts';
import { OUTCOME_WEIGHTS } from './outcome-weights.ts';

export interface OutcomeWeights {
  bias: number;
  dense: readonly number[];
  /** HASH_BUCKETS weights. */
  hashed: readonly number[];
  /** Share of weak-model failures in the training rows: the neutral point. */
  baseRate: number;
}

export function lastUserText(req: ChatRequest): string {
  const messages = req.messages ?? [];
  return textOf(messages[lastUserIndex(messages)]?.content);
}

export function weakFailLogit(
  f: DifficultyFeatures,
  text: string,
  w: OutcomeWeights = OUTCOME_WEIGHTS,
): number {
  if (w.hashed.length !== HASH_BUCKETS) throw new Error('outcome weights do not match the hash size');
  let z = w.bias;
  const dense = denseFeatures(f, text);
  for (let i = 0; i < dense.length; i++) z += (dense[i] as number) * (w.dense[i] ?? 0);
  const buckets = hashedBuckets(text);
  // Presence scaled by 1/sqrt(n): a long turn does not win by having more words.
  const scale = buckets.length ? 1 / Math.sqrt(buckets.length) : 0;
  for (const b of buckets) z += scale * (w.hashed[b] as number);
  return z;
}

export const sigmoid = (z: number): number => 1 / (1 + Math.exp(-z));

export const weakFailProbability = (f: DifficultyFeatures, text: string, w?: OutcomeWeights): number =>
  sigmoid(weakFailLogit(f, text, w));
