/**
 * In-process timing for the sections that call a function directly rather than over HTTP:
 * warm-up calls first (JIT tiers, lazily compiled regexes and tables), then one monotonic
 * clock reading around each measured call.
 */
import { percentile } from './stats.ts';

export interface TimingSpec {
  warmup: number;
  iterations: number;
}

export interface Timing {
  iterations: number;
  p50: number;
  p99: number;
  mean: number;
  max: number;
}

/** Pure: the summary of samples in ms (any order); NaN figures when there are none. */
export function summariseTimes(samplesMs: readonly number[]): Timing {
  const sorted = Float64Array.from(samplesMs).sort();
  let sum = 0;
  for (const s of sorted) sum += s;
  return {
    iterations: sorted.length,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    mean: sorted.length ? sum / sorted.length : Number.NaN,
    max: sorted.length ? sorted[sorted.length - 1]! : Number.NaN,
  };
}

const nsToMs = (ns: bigint): number => Number(ns) / 1e6;

/**
 * Results are kept here so that no call can be optimised away as unused, whatever the
 * function returns.
 */
let sink: unknown;
export const lastResult = (): unknown => sink;

/** Times each call of `fn` separately; returns the raw samples in ms, in call order. */
export function sampleSync(fn: () => unknown, spec: TimingSpec): number[] {
  for (let i = 0; i < spec.warmup; i++) sink = fn();
  const samples: number[] = [];
  for (let i = 0; i < spec.iterations; i++) {
    const start = process.hrtime.bigint();
    sink = fn();
    samples.push(nsToMs(process.hrtime.bigint() - start));
  }
  return samples;
}

export const timeSync = (fn: () => unknown, spec: TimingSpec): Timing => summariseTimes(sampleSync(fn, spec));

/** Formats ms with µs resolution; '-' for a figure that was not measured. */
export const fmtMs = (v: number): string => (Number.isFinite(v) ? v.toFixed(3) : '-');
