/**
 * How a price times a quantity becomes whole micro-dollars: a charge rounds up (a request never
 * pays less than its tokens cost, and a paid request is never free), and a hold rounds so that it
 * is never below the charge it bounds, float noise included. Pure, and on every metered request.
 */

/**
 * Float noise a charge forgives: 100 tokens at $0.07/M computes as 7.000000000000001 µ$ and is
 * charged 7, not 8. Never less than 1e-6 µ$ near zero, else 2^-47 of the amount (four times
 * the hold's margin below): a charge may round down by that much, 7 µ$ on a $1e9 request.
 */
const NOISE = 1e-6;
const RELATIVE_NOISE = 2 ** -47;

/**
 * The margin a hold adds before rounding, 2^-49 of the amount. Each float operation is off by
 * at most 2^-53 of its result: a charge (up to five products summed) lands at most (1+2^-53)^5
 * above its exact value, a hold (two products summed, then this margin added) at most
 * (1-2^-53)^3 below its own; together under 2^-50. So for at most the held tokens, split into
 * cached and not in any way, the hold's float is above the charge's, and the same monotone
 * rounding keeps it so. The margin is below the noise a charge forgives, so a whole amount is
 * held at exactly that.
 */
const HOLD_MARGIN = 2 ** -49;

/**
 * `scaled` µ$ (a float) → whole µ$ charged: up, past float noise; at least 1 when positive.
 * Monotone: a larger amount is never charged less (the hold's proof rests on it).
 */
export function chargedMicros(scaled: number): number {
  if (!(scaled > 0)) return 0;
  // Infinity less its forgiven noise is NaN, which every Math.min/max after it passes on.
  if (scaled === Infinity) return Infinity;
  const forgiven = Math.max(NOISE, scaled * RELATIVE_NOISE);
  return Math.max(1, Math.ceil(scaled - forgiven));
}

/** `scaled` µ$ (a float, the most the request may cost) → whole µ$ held, never below its charge. */
export function heldMicros(scaled: number): number {
  if (!(scaled > 0)) return 0;
  return chargedMicros(scaled + scaled * HOLD_MARGIN);
}

/** µ$ → USD, the edge form every cost is handed around in. */
export const microsToUsd = (micros: number): number => micros / 1_000_000;
