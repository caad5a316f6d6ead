/** Cost in USD from deployment pricing and real usage. Pure; failed attempts never reach here. */
import type { Pricing } from '../config/snapshot.ts';
import type { Usage } from '../formats/openai/types.ts';
import { MICROS_PER_USD } from '../stores/money.ts';

export function costUsd(
  pricing: Pricing | undefined,
  usage: Pick<Usage, 'prompt_tokens' | 'completion_tokens'> & Partial<Usage>,
): number {
  if (!pricing) return 0;
  const cached = Math.min(usage.prompt_tokens_details?.cached_tokens ?? 0, usage.prompt_tokens);
  const cachedRate = pricing.cachedInputPerMillionTokens ?? pricing.inputPerMillionTokens;
  const scaled =
    (usage.prompt_tokens - cached) * pricing.inputPerMillionTokens +
    cached * cachedRate +
    usage.completion_tokens * pricing.outputPerMillionTokens;
  // `scaled` is in micro-dollars. Whole micro-dollars make the header, the budget and
  // analytics agree exactly; a paid request never rounds down to free.
  if (scaled <= 0) return 0;
  return Math.max(1, Math.round(scaled)) / 1_000_000;
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
