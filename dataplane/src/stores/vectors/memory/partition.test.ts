/** The in-process index past exact scans: SimHash candidates, exact scores, deletes, eviction. */
import { describe, expect, it } from 'vitest';
import { partitionKey } from '../../cache-entries/partition.ts';
import { MemoryVectorIndex } from './index.ts';
import { EXACT_LIMIT } from './partition.ts';
import { SimHash } from './simhash.ts';

const HALF = 48;
let seed = 1;
function random(): number {
  seed = (seed * 48271) % 2147483647;
  return seed / 2147483647;
}
function unit(dim: number): Float32Array {
  const v = Float32Array.from({ length: dim }, () => random() - 0.5);
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
}
function near(a: Float32Array, t: number): Float32Array {
  const noise = unit(a.length);
  const v = a.map((x, i) => x + t * (noise[i] as number));
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
}
const concat = (q: Float32Array, c: Float32Array) => Float32Array.from([...q, ...c]);
const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * (b[i] as number), 0);

const P = partitionKey('acme', 'openai', 'big');
const N = EXACT_LIMIT * 8;

async function filled(now = () => 0) {
  const index = new MemoryVectorIndex({ clock: now, maxEntries: N * 2 });
  const entries: { q: Float32Array; c: Float32Array; v: Float32Array }[] = [];
  const contexts = [unit(HALF), unit(HALF), unit(HALF)];
  for (let i = 0; i < N; i++) {
    const q = unit(HALF);
    const c = contexts[i % 3] as Float32Array;
    const v = concat(q, c);
    entries.push({ q, c, v });
    await index.upsert(P, `e${i}`, v, 1_000_000);
  }
  return { index, entries };
}

describe('SimHash', () => {
  it('gives equal vectors equal codes and near vectors close sketches', () => {
    const h = new SimHash(HALF);
    const a = unit(HALF);
    const codes = new Uint16Array(h.tables * 3);
    h.hash(a, codes, 0);
    h.hash(Float32Array.from(a), codes, h.tables);
    h.hash(unit(HALF), codes, 2 * h.tables);
    expect(h.distance(codes, 0, codes, h.tables)).toBe(0);
    const bits = h.tables * h.bits;
    // Unrelated vectors differ on about half the bits.
    expect(h.distance(codes, 0, codes, 2 * h.tables)).toBeGreaterThan(bits * 0.3);
    expect(h.distance(codes, 0, codes, 2 * h.tables)).toBeLessThan(bits * 0.7);
  });

  it('is deterministic per dimension', () => {
    const v = unit(HALF);
    const a = new Uint16Array(24);
    const b = new Uint16Array(24);
    new SimHash(HALF).hash(v, a);
    new SimHash(HALF).hash(v, b);
    expect([...a]).toEqual([...b]);
  });
});

describe('in-process index beyond exact scans', () => {
  it('finds near-duplicate questions with their exact DualScore', async () => {
    const { index, entries } = await filled();
    let found = 0;
    const probes = 200;
    for (let i = 0; i < probes; i++) {
      const target = entries[(i * 37) % N] as (typeof entries)[number];
      // A paraphrase: query cosine about 0.9–0.97, same context, probed with alpha/beta weights.
      const q = near(target.q, 0.3 + (i % 3) * 0.1);
      const probe = concat(
        q.map((x) => 0.7 * x),
        target.c.map((x) => 0.3 * x),
      );
      const hits = await index.search(P, probe, 1);
      let best = -Infinity;
      for (const e of entries) best = Math.max(best, dot(probe, e.v));
      if (hits[0] && Math.abs(hits[0].score - best) < 1e-5) found++;
      expect(hits[0]?.score ?? -1).toBeCloseTo(dot(probe, entries[Number(hits[0]?.id.slice(1))]!.v), 5);
    }
    expect(found / probes).toBeGreaterThanOrEqual(0.97);
  });

  it('deletes, replaces and expires in bucketed partitions', async () => {
    let now = 0;
    const { index, entries } = await filled(() => now);
    const e5 = entries[5] as (typeof entries)[number];
    const probe = concat(e5.q, e5.c);
    expect((await index.search(P, probe, 1))[0]?.id).toBe('e5');
    expect(await index.delete(P, 'e5')).toBe(true);
    expect((await index.search(P, probe, 1))[0]?.id).not.toBe('e5');
    // The freed slot is reused by the next vector, which is found under its own id.
    const fresh = concat(unit(HALF), e5.c);
    await index.upsert(P, 'fresh', fresh, 1_000_000);
    expect((await index.search(P, fresh, 1))[0]).toMatchObject({ id: 'fresh' });
    // Replacing moves the id to its new vector.
    await index.upsert(P, 'e7', probe, 1_000_000);
    expect((await index.search(P, probe, 1))[0]?.id).toBe('e7');
    // Expiry: a short-lived entry disappears from results, then from the index.
    const brief = concat(unit(HALF), e5.c);
    await index.upsert(P, 'brief', brief, 10);
    expect((await index.search(P, brief, 1))[0]?.id).toBe('brief');
    now = 10;
    expect((await index.search(P, brief, 1))[0]?.id).not.toBe('brief');
    expect(await index.sweep()).toBe(1);
    expect((await index.stats()).entries).toBe(N);
  });

  it('evicts the oldest writes past maxEntries', async () => {
    const index = new MemoryVectorIndex({ clock: () => 0, maxEntries: 3 });
    const vs = [unit(8), unit(8), unit(8), unit(8)];
    for (const [i, v] of vs.entries()) await index.upsert(P, `v${i}`, v, 100);
    expect((await index.stats()).entries).toBe(3);
    expect((await index.search(P, vs[0] as Float32Array, 4)).map((h) => h.id)).not.toContain('v0');
    expect((await index.search(P, vs[3] as Float32Array, 1))[0]?.id).toBe('v3');
  });

  it('refuses a vector of another length in the same partition', async () => {
    const index = new MemoryVectorIndex();
    await index.upsert(P, 'a', unit(8), Date.now() + 1000);
    await expect(index.upsert(P, 'b', unit(10), Date.now() + 1000)).rejects.toBeInstanceOf(RangeError);
    await expect(index.search(P, unit(10), 1)).rejects.toBeInstanceOf(RangeError);
  });
});
