/**
 * Output a provider may bill beyond the caller's `max_tokens` when it thinks, one rule for the
 * bill (stream-charge.ts's usage bounds) and the hold (estimate.ts), so a hold always covers what
 * billing believes: the Anthropic adapter raises max_tokens by the thinking budget (up to 32,768
 * for `xhigh`) when the caller's bound does not exceed it, and Gemini 2.5 models think by default
 * (budgets up to 24,576). Believing a report up to the caller's bound alone billed a long
 * thought as the visible answer; holding that bound alone let the bill pass the hold.
 */
import type { Deployment, ModelRoute } from '../config/snapshot.ts';

export const THINKING_ALLOWANCE_TOKENS = 32_768;

/** Whether a reasoning effort asks the model to think (`none` asks it not to). */
export const effortThinks = (effort: string | undefined): boolean =>
  effort !== undefined && effort !== 'none';

/** What billing allows one answer from `deployment` beyond its output bound. */
export function thinkingAllowance(
  effort: string | undefined,
  deployment: Pick<Deployment, 'provider'>,
): number {
  return deployment.provider === 'gemini' || effortThinks(effort) ? THINKING_ALLOWANCE_TOKENS : 0;
}

/**
 * What a chat request's hold adds per sequence: the allowance when any effort the request may
 * carry (the caller's, or one difficulty routing may inject) thinks, or any deployment it may
 * land on is Gemini. Loops, not flatMap: this runs on every metered chat request.
 */
export function heldThinkingTokens(
  routes: readonly ModelRoute[],
  efforts: readonly (string | undefined)[],
): number {
  if (efforts.some(effortThinks)) return THINKING_ALLOWANCE_TOKENS;
  for (const r of routes)
    for (const d of r.deployments) if (d.provider === 'gemini') return THINKING_ALLOWANCE_TOKENS;
  return 0;
}
