/**
 * DualScore and bands (SPEC.md "Semantic cache rules" 2 and 3), and the vector layout that
 * lets an index rank by DualScore directly.
 *
 * An entry is stored as the concatenation [q | c] of its unit query and context vectors; a
 * lookup probes with [alpha·q' | beta·c']. Their dot product is exactly
 * alpha·cos(q, q') + beta·cos(c, c') — the DualScore — so a nearest-neighbour search by inner
 * product returns the best DualScore, not merely the closest query, and alpha and beta can
 * change in the policy without re-indexing anything.
 */
import type { Band, BandThresholds } from './policy.ts';

export function dot(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) throw new RangeError(`vector lengths differ: ${a.length} vs ${b.length}`);
  let s = 0;
  for (let i = 0; i < a.length; i++) s += (a[i] as number) * (b[i] as number);
  return s;
}

/** Cosine that does not assume unit vectors; 0 when either has no direction. */
export function cosine(a: Float32Array, b: Float32Array): number {
  const ab = dot(a, b);
  const norms = Math.sqrt(dot(a, a) * dot(b, b));
  return norms > 0 ? ab / norms : 0;
}

export function dualScore(
  queryA: Float32Array,
  queryB: Float32Array,
  contextA: Float32Array,
  contextB: Float32Array,
  alpha: number,
  beta: number,
): number {
  return alpha * cosine(queryA, queryB) + beta * cosine(contextA, contextB);
}

/** Float32 sums put an identical pair at 0.99999994: a score this close to a threshold meets it. */
const EPSILON = 1e-6;

/** Highest band whose threshold the score reaches; MISS below the TWEAK threshold. */
export function chooseBand(score: number, thresholds: BandThresholds): Band {
  if (!Number.isFinite(score)) return 'MISS';
  if (score + EPSILON >= thresholds.direct) return 'DIRECT';
  if (score + EPSILON >= thresholds.reuse) return 'REUSE';
  if (score + EPSILON >= thresholds.tweak) return 'TWEAK';
  return 'MISS';
}

function concat(a: Float32Array, wa: number, b: Float32Array, wb: number): Float32Array {
  if (a.length !== b.length)
    throw new RangeError(`query and context lengths differ: ${a.length} vs ${b.length}`);
  const out = new Float32Array(a.length * 2);
  for (let i = 0; i < a.length; i++) out[i] = (a[i] as number) * wa;
  for (let i = 0; i < b.length; i++) out[a.length + i] = (b[i] as number) * wb;
  return out;
}

/** What the index stores for an entry: [q | c], both unit length. */
export const entryVector = (query: Float32Array, context: Float32Array): Float32Array =>
  concat(query, 1, context, 1);

/** What a lookup searches with: [alpha·q | beta·c]; dot(entry, probe) is the DualScore. */
export const probeVector = (
  query: Float32Array,
  context: Float32Array,
  alpha: number,
  beta: number,
): Float32Array => concat(query, alpha, context, beta);
