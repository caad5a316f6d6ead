/** Cost in USD from deployment pricing and real usage. Pure; failed attempts never reach here. */
import type { Pricing } from '../config/snapshot.ts';
import type { Usage } from '../formats/openai/types.ts';
import { MICROS_PER_USD } from '../stores/money.ts';
import { chargedMicros, heldMicros, microsToUsd } from './micros.ts';

type ChargedUsage = Pick<Usage, 'prompt_tokens' | 'completion_tokens'> & Partial<Usage>;

export function costUsd(pricing: Pricing | undefined, usage: ChargedUsage): number {
  // Whole micro-dollars make the header, the budget and analytics agree exactly; rounded up,
  // so no request is charged less than its tokens cost (to the nearest, a 1.48 µ$ embedding
  // paid 1 µ$: a third of the spend went unbilled).
  return microsToUsd(chargedMicros(scaledCost(pricing, usage)));
}

/**
 * The cost in micro-dollars before rounding: for a charge made of several calls (a RAG
 * ingest's embedding batches), summed and rounded once, so the sum stays within the hold of
 * all their tokens rather than gaining a rounding per call.
 */
export function scaledCost(pricing: Pricing | undefined, usage: ChargedUsage): number {
  if (!pricing) return 0;
  const cached = Math.min(usage.prompt_tokens_details?.cached_tokens ?? 0, usage.prompt_tokens);
  const cachedRate = pricing.cachedInputPerMillionTokens ?? pricing.inputPerMillionTokens;
  return (
    (usage.prompt_tokens - cached) * pricing.inputPerMillionTokens +
    cached * cachedRate +
    usage.completion_tokens * pricing.outputPerMillionTokens
  );
}

/**
 * The most `costUsd` can charge at `pricing` for at most `promptTokens` in and
 * `completionTokens` out, however many of the prompt's tokens the provider reports cached:
 * every prompt token at the dearer of the input and cached rates. A hold at least this large
 * is never exceeded by that deployment's charge (see micros.ts for the rounding).
 */
export function heldCostUsd(
  pricing: Pricing | undefined,
  promptTokens: number,
  completionTokens: number,
): number {
  return microsToUsd(heldMicros(heldScaled(pricing, promptTokens, completionTokens)));
}

/** `heldCostUsd` before rounding, in µ$: the hold of several deployments is the largest of these. */
export function heldScaled(
  pricing: Pricing | undefined,
  promptTokens: number,
  completionTokens: number,
): number {
  if (!pricing) return 0;
  const inputRate = Math.max(pricing.inputPerMillionTokens, pricing.cachedInputPerMillionTokens ?? 0);
  return promptTokens * inputRate + completionTokens * pricing.outputPerMillionTokens;
}

/**
 * Header form (`X-Gantry-Cost`, its trailer): plain decimal, no exponent, at least one place,
 * trailing zeros cut: `0.0`, `1.5`, `0.000123`. Stated from the whole micro-dollars the amount
 * is charged as (nearest, as money.ts's toMicros), so a large cost shows no float noise (the
 * old `toFixed(10)` printed $2,500,000.30 as `2500000.2999999998`). Not money.ts's formatUsd:
 * that one is `$`-prefixed with cents, this format is on the wire. Integer arithmetic only, as
 * it runs once per request.
 */
export function formatUsd(usd: number): string {
  const scaled = Math.round(Math.abs(usd) * MICROS_PER_USD);
  // Past exact micro-dollars (beyond any real cost) the float has none to state: whole dollars.
  if (!Number.isSafeInteger(scaled)) return Number.isFinite(usd) ? `${BigInt(Math.round(usd))}.0` : '0.0';
  if (scaled === 0) return '0.0';
  const sign = usd < 0 ? '-' : '';
  const whole = Math.floor(scaled / MICROS_PER_USD);
  let frac = scaled - whole * MICROS_PER_USD;
  if (frac === 0) return `${sign}${whole}.0`;
  let places = 6;
  while (frac % 10 === 0) {
    frac /= 10;
    places--;
  }
  return `${sign}${whole}.${String(frac).padStart(places, '0')}`;
}
