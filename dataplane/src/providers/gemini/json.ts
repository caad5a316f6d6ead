/** Reading untyped upstream numbers without `any`. */

export const numberOr = (v: unknown, fallback: number): number =>
  typeof v === 'number' && Number.isFinite(v) ? v : fallback;
