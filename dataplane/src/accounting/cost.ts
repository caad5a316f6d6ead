/** Cost in USD from deployment pricing and real usage. Pure; failed attempts never reach here. */
import type { Pricing } from '../config/snapshot.ts';
import type { Usage } from '../formats/openai/types.ts';

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

/** Header form: plain decimal, no exponent, at most 10 places. */
export function formatUsd(usd: number): string {
  // Trailing zeros cut by hand: two regex replaces were a visible share of a chat request.
  const fixed = usd.toFixed(10);
  let end = fixed.length;
  while (end > 0 && fixed.charCodeAt(end - 1) === 48 /* 0 */) end--;
  if (end > 0 && fixed.charCodeAt(end - 1) === 46 /* . */) return `${fixed.slice(0, end)}0`;
  return end === fixed.length ? fixed : fixed.slice(0, end);
}
