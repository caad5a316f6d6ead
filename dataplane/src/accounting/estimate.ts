/**
 * What a request may cost, before it runs: real prompt tokens, the output it may produce
 * (`max_tokens`, else the deployment's limit, else a default) times every multiplier of
 * output (`n` choices, legacy `best_of` candidates, one completion per prompt), priced at
 * the dearest deployment of every model it may land on (the requested one, its fallbacks,
 * the model difficulty routing may choose), so a reservation is never too small.
 */
import type { ModelRoute, Pricing } from '../config/snapshot.ts';
import { costUsd } from './cost.ts';

/** Output assumed when neither the request nor the deployment bounds it. */
export const DEFAULT_MAX_OUTPUT_TOKENS = 4096;

/**
 * Ceilings that keep an estimate a safe integer all the way into the stores' scripts. No real
 * request comes near them, and any budget or token limit refuses a request that reaches them.
 */
export const MAX_ESTIMATE_TOKENS = 2 ** 50;
export const MAX_ESTIMATE_USD = 1e9;
/** What bounds the output of one request. */
export interface OutputBound {
  /** `max_tokens` (or its newer names) per generated sequence, when the request sets it. */
  maxTokens: number | undefined;
  /** Sequences generated: `n`, `best_of`, prompts of a batch, multiplied. 1 when absent. */
  sequences?: number | undefined;
  /** Charges that are not per token (searches, images), already priced at the dearest deployment. */
  unitCostUsd?: number | undefined;
  /** The estimate's ceiling when not MAX_ESTIMATE_USD. */
  ceilingUsd?: number | undefined;
}

export interface CostEstimate {
  promptTokens: number;
  maxOutputTokens: number;
  costUsd: number;
}

export function dearestPricing(...routes: readonly ModelRoute[]): Pricing | undefined {
  return dearestOf(routes);
}

// Loops, not flatMap: these run on every metered request.
function dearestOf(routes: readonly ModelRoute[]): Pricing | undefined {
  let worst: Pricing | undefined;
  for (const r of routes) {
    for (const d of r.deployments) {
      if (!d.pricing) continue;
      if (
        !worst ||
        d.pricing.inputPerMillionTokens + d.pricing.outputPerMillionTokens >
          worst.inputPerMillionTokens + worst.outputPerMillionTokens
      )
        worst = d.pricing;
    }
  }
  return worst;
}

export function maxOutputTokens(routes: readonly ModelRoute[], requested: number | undefined): number {
  if (requested !== undefined) return requested;
  let max: number | undefined;
  for (const r of routes)
    for (const d of r.deployments)
      if (d.maxOutputTokens !== undefined && (max === undefined || d.maxOutputTokens > max))
        max = d.maxOutputTokens;
  return max ?? DEFAULT_MAX_OUTPUT_TOKENS;
}

export function estimateCost(
  routes: readonly ModelRoute[],
  promptTokens: number,
  bound: OutputBound,
): CostEstimate {
  const sequences = Math.max(1, bound.sequences ?? 1);
  const prompt = Math.min(promptTokens, MAX_ESTIMATE_TOKENS);
  const output = Math.min(maxOutputTokens(routes, bound.maxTokens) * sequences, MAX_ESTIMATE_TOKENS);
  const cost =
    costUsd(dearestOf(routes), { prompt_tokens: prompt, completion_tokens: output }) +
    (bound.unitCostUsd ?? 0);
  return {
    promptTokens: prompt,
    maxOutputTokens: output,
    costUsd: Math.min(cost, bound.ceilingUsd ?? MAX_ESTIMATE_USD),
  };
}
