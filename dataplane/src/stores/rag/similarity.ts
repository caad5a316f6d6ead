/** Cosine similarity over unit vectors, and the best k first (ties keep ingest order). Pure. */

/** The vector scaled to length 1 (a zero vector stays zero and scores 0 against anything). */
export function unitVector(v: readonly number[]): Float32Array {
  let norm = 0;
  for (const x of v) norm += x * x;
  const out = new Float32Array(v.length);
  if (norm === 0) return out;
  const inv = 1 / Math.sqrt(norm);
  for (let i = 0; i < v.length; i++) out[i] = v[i]! * inv;
  return out;
}

export function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

export interface Scored<T> {
  item: T;
  score: number;
}

/** The k items whose vectors score best against `probe`, best first; ties keep input order. */
export function topK<T>(
  probe: Float32Array,
  items: readonly T[],
  vectorOf: (t: T) => Float32Array,
  k: number,
): Scored<T>[] {
  if (k <= 0) return [];
  // A bounded insertion list: k is small (≤ 50) and items are scanned once.
  const best: (Scored<T> & { order: number })[] = [];
  for (const [order, item] of items.entries()) {
    const score = dot(probe, vectorOf(item));
    if (best.length === k && score <= best[k - 1]!.score) continue;
    let at = best.length;
    while (at > 0 && best[at - 1]!.score < score) at--;
    best.splice(at, 0, { item, score, order });
    if (best.length > k) best.pop();
  }
  return best.map(({ item, score }) => ({ item, score }));
}
