/**
 * Money is kept in integer micro-dollars (1 USD = 1,000,000 µ$) so sums are exact; USD floats
 * exist only at the edges (config, headers, JSON). 1 µ$ is far below any provider's price step
 * (a token of a $0.10/M model costs 0.1 µ$, so costs are rounded once per request, not per token).
 */
export const MICROS_PER_USD = 1_000_000;

export type Rounding = 'nearest' | 'up';

/**
 * Float noise such as 0.1 * 1e6 = 100000.00000000001 must not round a whole amount up. It grows
 * with the amount (a USD double holds ~16 significant digits, and scaling adds one more rounding):
 * 11024.88 * 1e6 is 11024880000.000002, past a fixed 1e-6 from ~$8,600 up. So the tolerance is
 * a few units in the last place of the scaled amount (2^-50 relative: 4 ulps), and never less
 * than 1e-6 µ$ near zero. A real fraction of a micro-dollar (a token's 0.1 µ$) is still
 * rounded up below ~$1e8 (the tolerance is 0.009 µ$ at $1e7); past that a USD double can hardly
 * state one.
 */
const NOISE = 1e-6;
const RELATIVE_NOISE = 2 ** -50;

/**
 * USD → integer micro-dollars. `nearest` (half away from zero) for charges; `up` (toward +∞)
 * for amounts held in advance, so a reservation never holds less than the estimate.
 */
export function toMicros(usd: number, rounding: Rounding = 'nearest'): number {
  if (!Number.isFinite(usd)) throw new RangeError(`not a finite USD amount: ${usd}`);
  const scaled = usd * MICROS_PER_USD;
  const nearest = Math.sign(scaled) * Math.round(Math.abs(scaled));
  let micros: number;
  if (Math.abs(scaled - nearest) < Math.max(NOISE, Math.abs(scaled) * RELATIVE_NOISE)) micros = nearest;
  else micros = rounding === 'up' ? Math.ceil(scaled) : nearest;
  if (!Number.isSafeInteger(micros)) throw new RangeError(`USD amount out of range: ${usd}`);
  return micros === 0 ? 0 : micros; // no -0
}

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
