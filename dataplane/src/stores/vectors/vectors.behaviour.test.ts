/** One behavioural suite, run against the in-process index and Milvus (a real Milvus Lite server). */
import { afterEach, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { partitionKey } from '../cache-entries/partition.ts';
import { fakeClock, type FakeClock } from '../testing/backends.ts';
import { vectorBackends } from './testing.ts';
import { MemoryVectorIndex } from './memory/index.ts';
import type { VectorIndex } from './types.ts';

const DIM = 16;

/** A deterministic unit vector. */
function unit(seed: number, dim = DIM): Float32Array {
  const v = new Float32Array(dim);
  let s = seed * 7919 + 17;
  let norm = 0;
  for (let i = 0; i < dim; i++) {
    s = (s * 48271) % 2147483647;
    v[i] = s / 2147483647 - 0.5;
    norm += (v[i] as number) ** 2;
  }
  for (let i = 0; i < dim; i++) v[i] = (v[i] as number) / Math.sqrt(norm);
  return v;
}

/** `a` moved towards `b` by t, renormalised: a vector at a chosen closeness to `a`. */
function blend(a: Float32Array, b: Float32Array, t: number): Float32Array {
  const v = a.map((x, i) => (1 - t) * x + t * (b[i] as number));
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
}

const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * (b[i] as number), 0);

const P = partitionKey('acme', 'openai', 'shapeA');

describe.each(vectorBackends)('vector index ($name)', (backend) => {
  let index: VectorIndex | undefined;
  let clock: FakeClock;

  async function open(): Promise<VectorIndex> {
    clock = fakeClock(Date.parse('2025-03-14T12:00:00Z'));
    index = await backend.create(clock.now);
    return index;
  }

  afterEach(async () => {
    await index?.close();
    index = undefined;
  });

  const later = () => clock.now() + 3_600_000;

  it('runs against the shared servers of the run', () => {
    expect(inject('milvusAddress')).toMatch(/^127\.0\.0\.1:\d+$/);
  });

  it('returns nothing for an empty or unknown partition', async () => {
    const idx = await open();
    expect(await idx.search(P, unit(1), 3)).toEqual([]);
    await idx.upsert(P, 'a', unit(1), later());
    expect(await idx.search(partitionKey('acme', 'openai', 'other'), unit(1), 3)).toEqual([]);
    expect(await idx.search(P, unit(1), 0)).toEqual([]);
  });

  it('returns hits best first with their inner product as score, at most k', async () => {
    const idx = await open();
    const target = unit(1);
    const far = unit(99);
    const stored = [0, 0.2, 0.4, 0.6, 0.8].map((t) => blend(target, far, t));
    for (const [i, v] of stored.entries()) await idx.upsert(P, `e${i}`, v, later());
    const hits = await idx.search(P, target, 3);
    expect(hits.map((h) => h.id)).toEqual(['e0', 'e1', 'e2']);
    for (const h of hits)
      expect(h.score).toBeCloseTo(dot(target, stored[Number(h.id.slice(1))] as Float32Array), 4);
    expect(hits[0]?.score).toBeCloseTo(1, 4);
    expect((await idx.search(P, target, 10)).length).toBe(5);
  });

  it('replaces the vector stored under an id', async () => {
    const idx = await open();
    await idx.upsert(P, 'a', unit(1), later());
    await idx.upsert(P, 'a', unit(2), later());
    const hits = await idx.search(P, unit(2), 5);
    expect(hits).toHaveLength(1);
    expect(hits[0]).toMatchObject({ id: 'a' });
    expect(hits[0]?.score).toBeCloseTo(1, 4);
    expect((await idx.stats()).entries).toBe(1);
  });

  it('never answers from another partition: tenant, format or shape', async () => {
    const idx = await open();
    const v = unit(5);
    const a = partitionKey('tenant-a', 'openai', 'shape');
    await idx.upsert(a, 'only-a', v, later());
    for (const other of [
      partitionKey('tenant-b', 'openai', 'shape'),
      partitionKey('tenant-a', 'anthropic', 'shape'),
      partitionKey('tenant-a', 'openai', 'shape2'),
      // A tenant whose name is a prefix of another's.
      partitionKey('tenant', 'openai', 'shape'),
    ])
      expect(await idx.search(other, v, 5), other).toEqual([]);
    expect((await idx.search(a, v, 5)).map((h) => h.id)).toEqual(['only-a']);
    // The same id in two partitions is two entries.
    const b = partitionKey('tenant-b', 'openai', 'shape');
    await idx.upsert(b, 'only-a', unit(6), later());
    expect((await idx.search(a, v, 5))[0]?.score).toBeCloseTo(1, 4);
    await idx.delete(b, 'only-a');
    expect((await idx.search(a, v, 5)).map((h) => h.id)).toEqual(['only-a']);
  });

  it('never returns an expired vector, and sweep removes them', async () => {
    const idx = await open();
    await idx.upsert(P, 'short', unit(1), clock.now() + 1000);
    await idx.upsert(P, 'long', unit(2), clock.now() + 10_000);
    expect((await idx.search(P, unit(1), 5)).map((h) => h.id).sort()).toEqual(['long', 'short']);
    clock.advance(1000);
    expect((await idx.search(P, unit(1), 5)).map((h) => h.id)).toEqual(['long']);
    const swept = await idx.sweep();
    if (swept >= 0) expect(swept).toBe(1);
    expect((await idx.stats()).entries).toBe(1);
    clock.advance(9000);
    expect(await idx.search(P, unit(2), 5)).toEqual([]);
  });

  it('does not store a vector that has already expired', async () => {
    const idx = await open();
    await idx.upsert(P, 'past', unit(1), clock.now());
    expect(await idx.search(P, unit(1), 5)).toEqual([]);
  });

  it('deletes one vector', async () => {
    const idx = await open();
    await idx.upsert(P, 'a', unit(1), later());
    await idx.upsert(P, 'b', unit(2), later());
    expect(await idx.delete(P, 'a')).toBe(true);
    expect((await idx.search(P, unit(1), 5)).map((h) => h.id)).toEqual(['b']);
    if (idx.backend === 'memory') expect(await idx.delete(P, 'a')).toBe(false);
  });

  it('flushes one tenant, then everything', async () => {
    const idx = await open();
    const a = partitionKey('a', 'openai', 's');
    const a2 = partitionKey('a', 'anthropic', 's');
    const b = partitionKey('b', 'openai', 's');
    await idx.upsert(a, '1', unit(1), later());
    await idx.upsert(a2, '2', unit(2), later());
    await idx.upsert(b, '3', unit(3), later());
    expect((await idx.stats('a')).entries).toBe(2);
    expect((await idx.stats('b')).entries).toBe(1);
    expect((await idx.stats('c')).entries).toBe(0);
    const flushed = await idx.flush('a');
    if (flushed >= 0) expect(flushed).toBe(2);
    expect(await idx.search(a, unit(1), 5)).toEqual([]);
    expect(await idx.search(a2, unit(2), 5)).toEqual([]);
    expect((await idx.search(b, unit(3), 5)).map((h) => h.id)).toEqual(['3']);
    await idx.flush();
    expect(await idx.search(b, unit(3), 5)).toEqual([]);
    expect((await idx.stats()).entries).toBe(0);
  });

  it('reports entries and memory', async () => {
    const idx = await open();
    for (let i = 0; i < 5; i++) await idx.upsert(P, `e${i}`, unit(i), later());
    const stats = await idx.stats();
    expect(stats).toMatchObject({ backend: backend.name, status: 'ok', entries: 5 });
    expect(stats.memoryBytes).toBeGreaterThan(0);
  });

  it('keeps vectors of different lengths apart', async () => {
    const idx = await open();
    const small = partitionKey('acme', 'openai', 'e1');
    const big = partitionKey('acme', 'openai', 'e2');
    await idx.upsert(small, 's', unit(1, 8), later());
    await idx.upsert(big, 'b', unit(1, 32), later());
    expect((await idx.search(small, unit(1, 8), 5)).map((h) => h.id)).toEqual(['s']);
    expect((await idx.search(big, unit(1, 32), 5)).map((h) => h.id)).toEqual(['b']);
  });

  it('refuses malformed partition keys', async () => {
    const idx = await open();
    for (const bad of ['', 'acme', 'a/b', 'a/b/c" or 1==1 or "', 'a b/openai/x'])
      await expect(idx.upsert(bad, 'x', unit(1), later()), bad).rejects.toBeInstanceOf(TypeError);
    await expect(idx.search('x"/y/z', unit(1), 1)).rejects.toBeInstanceOf(TypeError);
  });
});

describe('vector index (memory) bounds', () => {
  it('one tenant flooding the index never evicts another tenant below its share', async () => {
    const idx = new MemoryVectorIndex({ clock: () => 0, maxEntries: 10 });
    const quiet = partitionKey('quiet', 'openai', 's');
    const noisy = partitionKey('noisy', 'openai', 's');
    for (let i = 0; i < 3; i++) await idx.upsert(quiet, `q${i}`, unit(i), 100);
    for (let i = 0; i < 300; i++) await idx.upsert(noisy, `n${i}`, unit(i), 100);
    expect((await idx.search(quiet, unit(0), 5)).map((h) => h.id).sort()).toEqual(['q0', 'q1', 'q2']);
    expect((await idx.stats('noisy')).entries).toBe(7);
    expect((await idx.stats()).entries).toBe(10);
  });

  it('caps each tenant on its own bound too', async () => {
    const idx = new MemoryVectorIndex({ clock: () => 0, maxEntries: 100, maxEntriesPerTenant: 3 });
    const a = partitionKey('a', 'openai', 's');
    for (let i = 0; i < 8; i++) await idx.upsert(a, `e${i}`, unit(i), 100);
    expect((await idx.stats('a')).entries).toBe(3);
    expect((await idx.search(a, unit(7), 1)).map((h) => h.id)).toEqual(['e7']);
  });
});
