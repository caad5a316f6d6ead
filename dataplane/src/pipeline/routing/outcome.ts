/**
 * The outcome model: the probability that a weak model fails the last user turn's ask where a
 * strong one succeeds. A linear model over the turn's static MiniLM embedding and its log
 * token count (static-embedding.ts), trained by scripts/train-routing.ts as one model per
 * seen domain (MMLU, Vicuna bench, DRAW-1K word problems, HumanEval/MBPP code) summed, and
 * chosen by how well it ranks a domain it did not train on. Weights in outcome-weights.ts.
 * No model call.
 */
import { OUTCOME_WEIGHTS } from './outcome-weights.ts';
import { STATIC_DIMENSIONS, staticEmbedding } from './static-embedding.ts';

export interface OutcomeWeights {
  bias: number;
  /** Weight of log(1 + WordPiece tokens). */
  logTokens: number;
  /** STATIC_DIMENSIONS weights on the unit-length static embedding. */
  embedding: readonly number[];
  /** Share of weak-model failures in the MMLU training rows: the neutral point. */
  baseRate: number;
}

export function weakFailLogit(text: string, w: OutcomeWeights = OUTCOME_WEIGHTS): number {
  if (w.embedding.length !== STATIC_DIMENSIONS) throw new Error('outcome weights do not match the embedding');
  const e = staticEmbedding(text);
  let z = w.bias + w.logTokens * Math.log1p(e.tokens);
  for (let j = 0; j < STATIC_DIMENSIONS; j++) z += (e.vector[j] as number) * (w.embedding[j] as number);
  return z;
}

export const sigmoid = (z: number): number => 1 / (1 + Math.exp(-z));

export const weakFailProbability = (text: string, w?: OutcomeWeights): number =>
  sigmoid(weakFailLogit(text, w));
