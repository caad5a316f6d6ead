/**
 * The money of a hit (SPEC.md "Semantic cache rules" 3 and 8), from real pricing:
 *   - the saving of a hit is what the full call would have cost — the request's prompt
 *     tokens plus the cached answer's completion tokens at the requested model's prices —
 *     less what serving it cost (the TWEAK adaptation call; DIRECT and REUSE cost nothing);
 *   - TWEAK runs only when that full-call cost exceeds the adaptation's estimated cost;
 *   - the wallet gets the tenant tier's percentage of the saving, rounded down to the µ$.
 * A model without pricing costs 0, so it saves nothing: no TWEAK, no credit.
 */
import { costUsd } from '../../accounting/cost.ts';
import type { Pricing } from '../../config/snapshot.ts';
import { fromMicros, toMicros } from '../../stores/money.ts';
import type { Band } from './policy.ts';

export interface TokenCount {
  promptTokens: number;
  completionTokens: number;
}

/** What a call of that size costs at those prices (0 without pricing). */
export const callCostUsd = (pricing: Pricing | undefined, tokens: TokenCount): number =>
  costUsd(pricing, { prompt_tokens: tokens.promptTokens, completion_tokens: tokens.completionTokens });

/** TWEAK is worth running only when reusing saves more than adapting costs (strictly). */
export function tweakWorthIt(savingUsd: number, adaptationCostUsd: number): boolean {
  return Number.isFinite(savingUsd) && Number.isFinite(adaptationCostUsd) && savingUsd > adaptationCostUsd;
}

export interface HitSavingInput {
  band: Band;
  /** The full call the hit replaced: this request's prompt, the cached answer's completion. */
  fullCall: TokenCount;
  fullPricing: Pricing | undefined;
  /** TWEAK only: the adaptation call as made (actual usage) or estimated. */
  adaptation?: TokenCount | undefined;
  adaptationPricing?: Pricing | undefined;
}

export interface HitSaving {
  savedUsd: number;
  /** Tokens the provider did not have to process (full call less adaptation, never negative). */
  tokensSaved: number;
}

export function hitSaving(input: HitSavingInput): HitSaving {
  if (input.band === 'MISS') return { savedUsd: 0, tokensSaved: 0 };
  const full = callCostUsd(input.fullPricing, input.fullCall);
  const fullTokens = input.fullCall.promptTokens + input.fullCall.completionTokens;
  const adaptation = input.band === 'TWEAK' ? input.adaptation : undefined;
  const spent = adaptation ? callCostUsd(input.adaptationPricing, adaptation) : 0;
  const spentTokens = adaptation ? adaptation.promptTokens + adaptation.completionTokens : 0;
  return {
    savedUsd: Math.max(0, fromMicros(toMicros(full - spent))),
    tokensSaved: Math.max(0, fullTokens - spentTokens),
  };
}

/**
 * The wallet credit for a saving: the tier's percentage (CachePolicy `savingsShare`; an
 * unknown tier gets 0), rounded down to the micro-dollar so a credit never exceeds its share.
 */
export function walletCreditUsd(
  savedUsd: number,
  tier: string,
  savingsShare: Readonly<Record<string, number>>,
): number {
  const percent = Object.hasOwn(savingsShare, tier) ? (savingsShare[tier] as number) : 0;
  if (!(savedUsd > 0) || !(percent > 0)) return 0;
  const micros = Math.floor((toMicros(savedUsd) * Math.min(percent, 100)) / 100 + 1e-9);
  return fromMicros(micros);
}
