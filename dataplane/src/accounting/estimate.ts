/**
 * What a request may cost, before it runs: real prompt tokens, the output it may produce
 * (`max_tokens`, else the deployment's limit, else a default), priced at the dearest
 * deployment of every model it may land on (the requested one, its fallbacks, the model
 * difficulty routing may choose), so a reservation is never too small.
 */
import type { ModelRoute, Pricing } from '../config/snapshot.ts';
import { costUsd } from './cost.ts';

/** Output assumed when neither the request nor the deployment bounds it. */
export const DEFAULT_MAX_OUTPUT_TOKENS = 4096;

export interface CostEstimate {
  promptTokens: number;
  maxOutputTokens: number;
  costUsd: number;
}

export function dearestPricing(...routes: readonly ModelRoute[]): Pricing | undefined {
  let worst: Pricing | undefined;
  for (const d of routes.flatMap((r) => r.deployments)) {
    if (!d.pricing) continue;
    if (
      !worst ||
      d.pricing.inputPerMillionTokens + d.pricing.outputPerMillionTokens >
        worst.inputPerMillionTokens + worst.outputPerMillionTokens
    )
      worst = d.pricing;
  }
  return worst;
}

export function maxOutputTokens(routes: readonly ModelRoute[], requested: number | undefined): number {
  if (requested !== undefined) return requested;
  const limits = routes
    .flatMap((r) => r.deployments)
    .map((d) => d.maxOutputTokens)
    .filter((n): n is number => n !== undefined);
  return limits.length > 0 ? Math.max(...limits) : DEFAULT_MAX_OUTPUT_TOKENS;
}

export function estimateCost(
  routes: readonly ModelRoute[],
  promptTokens: number,
  requestedMaxTokens: number | undefined,
): CostEstimate {
  const output = maxOutputTokens(routes, requestedMaxTokens);
  return {
    promptTokens,
    maxOutputTokens: output,
    costUsd: costUsd(dearestPricing(...routes), { prompt_tokens: promptTokens, completion_tokens: output }),
  };
}
