/**
 * What a request may cost, before it runs: real prompt tokens, the output it may produce
 * (`max_tokens`, else the deployment's limit, else a default, plus for chat the thinking
 * billing allows) times every multiplier of
 * output (`n` choices, legacy `best_of` candidates, one completion per prompt), held at the
 * most any deployment of any model it may land on (the requested one, its fallbacks, the model
 * difficulty routing may choose) would charge for those tokens, so a reservation is never
 * smaller than the charge, wherever routing or failover sends the request.
 */
import type { ModelRoute, Pricing } from '../config/snapshot.ts';
import { heldScaled } from './cost.ts';
import { heldMicros, microsToUsd } from './micros.ts';
import { heldThinkingTokens } from './thinking.ts';

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
  /**
   * Chat only: the reasoning efforts the request may carry (the caller's, or those difficulty
   * routing may inject). Present, the output bound gets billing's thinking allowance when one
   * thinks or any deployment is Gemini (accounting/thinking.ts).
   */
  efforts?: readonly (string | undefined)[] | undefined;
}

export interface CostEstimate {
  promptTokens: number;
  maxOutputTokens: number;
  costUsd: number;
}

/**
 * The deployment with the highest input + output price: a representative price of a model (the
 * cache's saving, the cheapest extraction model). Not a bound on a charge: a deployment dear on
 * input and cheap on output is not "dearest" by the sum, yet charges more for a long prompt.
 * Holds use `heldTokenCostUsd`.
 */
export function dearestPricing(...routes: readonly ModelRoute[]): Pricing | undefined {
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

/**
 * The most any one deployment of `routes` can charge for at most `promptTokens` in and
 * `completionTokens` out: the largest of each deployment's own worst case, not one deployment's
 * prices (no single price table need be the dearest for every mix of tokens), nor the sum of
 * per-price maxima (a charge is made at one deployment's prices, so that would hold more than
 * any request can cost). Loops, not flatMap: this runs on every metered request.
 */
export function heldTokenCostUsd(
  routes: readonly ModelRoute[],
  promptTokens: number,
  completionTokens: number,
): number {
  let worst = 0;
  for (const r of routes)
    for (const d of r.deployments) {
      const scaled = heldScaled(d.pricing, promptTokens, completionTokens);
      // A price no CRD admits (Infinity, 1e308) makes NaN (∞ × 0 tokens) or Infinity here, and
      // Math.max would let one NaN zero the whole hold: a price that cannot be read holds the
      // most (the estimate's ceiling, which a budget refuses), never nothing.
      if (!(scaled <= worst)) worst = Number.isNaN(scaled) ? Infinity : scaled;
    }
  return microsToUsd(heldMicros(worst));
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
  const thinking = bound.efforts ? heldThinkingTokens(routes, bound.efforts) : 0;
  const output = Math.min(
    (maxOutputTokens(routes, bound.maxTokens) + thinking) * sequences,
    MAX_ESTIMATE_TOKENS,
  );
  const cost = heldTokenCostUsd(routes, prompt, output) + (bound.unitCostUsd ?? 0);
  return {
    promptTokens: prompt,
    maxOutputTokens: output,
    costUsd: Math.min(cost, bound.ceilingUsd ?? MAX_ESTIMATE_USD),
  };
}
