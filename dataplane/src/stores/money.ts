/**
 * Money is kept in integer micro-dollars (1 USD = 1,000,000 µ$) so sums are exact; USD floats
 * exist only at the edges (config, headers, JSON). 1 µ$ is far below any provider's price step
 * (a token of a $0.10/M model costs 0.1 µ$, so costs are rounded once per request, not per token).
 */
export const MICROS_PER_USD = 1_000_000;

export type Rounding = 'nearest' | 'up';

/**
 * Float noise such as 0.1 * 1e6 = 100000.00000000001 must not round a whole amount up. It grows
 * with the amount (a USD double holds ~16 significant digits): $11,024.88 reached as a sum is
 * 11024.880000000001, past a fixed 1e-6 µ$ from ~$8,600 up. So the tolerance is a few units in
 * the last place of the amount (2^-50 relative: 4 ulps), never less than 1e-6 µ$ near zero, and
 * never more than 0.01 µ$: uncapped it passed 0.5 µ$ near $5.6e8, and `up` then held a whole
 * micro-dollar less than the estimate ($500,000,000.0000003 held $500,000,000). Past ~$1.1e7
 * the cap rules, so a sum whose noise exceeds 0.01 µ$ is held one micro-dollar over: a hold may
 * be a micro-dollar too high, never too low.
 */
const NOISE = 1e-6;
const RELATIVE_NOISE = 2 ** -50;
const MAX_NOISE = 0.01;

/** Splits a double into two halves of 26 bits whose products are exact (Dekker). */
const SPLITTER = 2 ** 27 + 1;

/**
 * The rounding error of `usd * MICROS_PER_USD`: the exact product is `scaled + error` (Dekker's
 * two-product; 1e6 needs only 20 bits, so it is its own high half). Past ~$1.3e8 the product's
 * own rounding (an ulp of 0.0625 µ$ at $5e8) is larger than the tolerance, and `up` must
 * judge the amount the double states, not its rounded product.
 */
function productError(usd: number, scaled: number): number {
  const c = SPLITTER * usd;
  const hi = c - (c - usd);
  const lo = usd - hi;
  return hi * MICROS_PER_USD - scaled + lo * MICROS_PER_USD;
}

/**
 * USD → integer micro-dollars. `nearest` (half away from zero) for charges; `up` (toward +∞)
 * for amounts held in advance, so a reservation never holds less than the estimate (by more
 * than the float noise above).
 */
export function toMicros(usd: number, rounding: Rounding = 'nearest'): number {
  if (!Number.isFinite(usd)) throw new RangeError(`not a finite USD amount: ${usd}`);
  const scaled = usd * MICROS_PER_USD;
  const nearest = Math.sign(scaled) * Math.round(Math.abs(scaled));
  let micros = nearest;
  if (rounding === 'up') {
    // The exact amount is nearest + excess (scaled - nearest is exact: both are within 1).
    const excess = scaled - nearest + productError(usd, scaled);
    const tolerance = Math.max(NOISE, Math.min(MAX_NOISE, Math.abs(scaled) * RELATIVE_NOISE));
    if (excess >= tolerance) micros = nearest + 1;
  }
  if (!Number.isSafeInteger(micros)) throw new RangeError(`USD amount out of range: ${usd}`);
  return micros === 0 ? 0 : micros; // no -0
}

/**
 * The most one charge books, the estimator's ceiling too (MAX_ESTIMATE_USD): no real request
 * comes near it, and its micro-dollars, summed with a period's spend, stay safe integers. A
 * larger amount (a corrupt report priced as given) threw in toMicros and the charge was
 * dropped: the request went free.
 */
export const MAX_CHARGE_USD = 1e9;

/**
 * A charge as the stores book it: above the ceiling, infinite or not a number, the ceiling
 * (an amount that cannot be computed never makes a call free). Callers with a logger say so
 * when this changes an amount.
 */
export const chargeableUsd = (usd: number): number => (usd <= MAX_CHARGE_USD ? usd : MAX_CHARGE_USD);

/** The micro-dollars a charge of `usd` books: never negative, never above the ceiling, never a throw. */
export const chargeMicros = (usd: number): number => toMicros(Math.max(0, chargeableUsd(usd)));

export function fromMicros(micros: number): number {
  return micros / MICROS_PER_USD;
}

/** The USD value the stores will record for `usd`; report this one so every sum agrees. */
export function roundUsd(usd: number): number {
  return fromMicros(toMicros(usd));
}

/**
 * `$1.50`, `$0.00015`: at least cents, at most micro-dollars, no float noise. `up` states an
 * estimate as the whole micro-dollars held for it.
 */
export function formatUsd(usd: number, rounding: Rounding = 'nearest'): string {
  const micros = toMicros(usd, rounding);
  const sign = micros < 0 ? '-' : '';
  const abs = Math.abs(micros);
  const whole = Math.floor(abs / MICROS_PER_USD);
  const frac = String(abs % MICROS_PER_USD)
    .padStart(6, '0')
    .replace(/0+$/, '')
    .padEnd(2, '0');
  return `${sign}$${whole}.${frac}`;
}
