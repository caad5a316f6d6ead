/**
 * The longest run of changes that fits, found from a guess: with sizes that grow with each
 * change taken, a good guess costs two probes where a bisection over thousands of changes costs
 * a dozen, and each probe is a gzip of the whole snapshot.
 */

/**
 * The largest n in [0, len] with fits(n), given that fits holds up to some n and not beyond
 * (n = 0 is taken to fit). Gallops from the guess, then bisects what is left.
 */
export function longestFitting(len: number, fits: (n: number) => boolean, guess: number): number {
  let lo = 0;
  let hi = len;
  const g = Math.max(0, Math.min(len, Math.floor(guess)));
  let step = 1;
  if (g === 0 || fits(g)) {
    lo = g;
    while (lo < hi) {
      const probe = Math.min(hi, lo + step);
      if (!fits(probe)) {
        hi = probe - 1;
        break;
      }
      lo = probe;
      step *= 2;
    }
  } else {
    hi = g - 1;
    while (lo < hi) {
      const probe = Math.max(lo + 1, hi - step + 1);
      if (fits(probe)) {
        lo = probe;
        break;
      }
      hi = probe - 1;
      step *= 2;
    }
  }
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * Where the limit falls, by interpolating between the measured sizes of none and all of the
 * changes in proportion to each change's growth in plain JSON: the largest n whose estimate fits.
 */
export function guessFitting(
  growth: readonly number[],
  sizeOfNone: number,
  sizeOfAll: number,
  limit: number,
): number {
  const total = growth.reduce((a, b) => a + Math.max(0, b), 0);
  if (sizeOfAll <= limit) return growth.length;
  if (total <= 0 || sizeOfNone > limit) return 0;
  const perByte = (sizeOfAll - sizeOfNone) / total;
  let size = sizeOfNone;
  for (let n = 0; n < growth.length; n++) {
    size += Math.max(0, growth[n]!) * perByte;
    if (size > limit) return n;
  }
  return growth.length;
}
