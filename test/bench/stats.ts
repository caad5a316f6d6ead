/** Summary statistics for one measured cell: pure functions over recorded samples. */

export interface Samples {
  /** Wall time the cell ran for, in ms (from the first request sent to the last answer read). */
  elapsedMs: number;
  /** Whole-exchange latency of each successful request, in ms. */
  latencyMs: number[];
  /** Time to the first body chunk of each successful request, in ms. */
  firstByteMs: number[];
  errors: number;
  /** The first failure seen, so a broken target is explained rather than just counted. */
  firstError?: string;
}

export interface CellStats {
  requests: number;
  errors: number;
  rps: number;
  p50: number;
  p99: number;
  ttfbP50: number;
  ttfbP99: number;
  firstError?: string;
}

/** Nearest-rank percentile (q in 0..1) of an ascending array; NaN when empty. */
export function percentile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil(q * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

// Typed-array sort is numeric (a plain array's default sort compares strings).
const ascending = (xs: readonly number[]): Float64Array => Float64Array.from(xs).sort();

export function summarise(s: Samples): CellStats {
  const lat = ascending(s.latencyMs);
  const ttfb = ascending(s.firstByteMs);
  return {
    requests: s.latencyMs.length,
    errors: s.errors,
    rps: s.elapsedMs > 0 ? (s.latencyMs.length * 1000) / s.elapsedMs : 0,
    p50: percentile(lat, 0.5),
    p99: percentile(lat, 0.99),
    ttfbP50: percentile(ttfb, 0.5),
    ttfbP99: percentile(ttfb, 0.99),
    ...(s.firstError !== undefined && { firstError: s.firstError }),
  };
}

/** One cell measured in several windows (e.g. alternated with another cell): their union. */
export function mergeSamples(parts: readonly Samples[]): Samples {
  const merged: Samples = { elapsedMs: 0, latencyMs: [], firstByteMs: [], errors: 0 };
  for (const p of parts) {
    merged.elapsedMs += p.elapsedMs;
    // A loop rather than push(...xs): a long window would exceed the argument limit.
    for (const x of p.latencyMs) merged.latencyMs.push(x);
    for (const x of p.firstByteMs) merged.firstByteMs.push(x);
    merged.errors += p.errors;
    merged.firstError ??= p.firstError;
  }
  return merged;
}
