/**
 * One behavioural suite for RAG indexes: in process, vector-backed over in-process parts,
 * and vector-backed over Milvus Lite and Redis (what several pods share).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { backends, fakeClock, type StoreFixture } from '../testing/backends.ts';
import { memoryVectors, milvusVectors } from '../vectors/testing.ts';
import type { VectorIndex } from '../vectors/types.ts';
import {
  DEFAULT_MAX_CHUNKS_PER_INDEX,
  DEFAULT_MAX_CHUNKS_PER_TENANT,
  MemoryRagIndexStore,
} from './memory.ts';
import { topK, unitVector } from './similarity.ts';
import { RagIndexFull, RagStorageFull, type RagIndexStore, type StoredChunk } from './types.ts';
import { RAG_KEEP_MS, VectorRagIndexStore, type RagRecord } from './vector-backed.ts';

const chunk = (documentId: string, i: number, text: string, v: number[]): StoredChunk => ({
  documentId,
  filename: `${documentId}.txt`,
  chunkIndex: i,
  text,
  vector: unitVector(v),
});

interface Opened {
  store: RagIndexStore;
  close(): Promise<void>;
}

const [memoryStores, redisStores] = backends;

const variants: { name: string; open(limit: number): Promise<Opened> }[] = [
  {
    name: 'memory',
    open: async (limit) => ({
      store: new MemoryRagIndexStore({ maxChunksPerIndex: limit }),
      close: async () => {},
    }),
  },
  ...[
    { name: 'vector-backed (in process)', vectors: memoryVectors, records: memoryStores! },
    { name: 'vector-backed (Milvus + Redis)', vectors: milvusVectors, records: redisStores! },
  ].map((v) => ({
    name: v.name,
    async open(limit: number): Promise<Opened> {
      const clock = fakeClock();
      const vectors: VectorIndex = await v.vectors.create(clock.now);
      const fixture: StoreFixture = await v.records.create({});
      const stores = await fixture.open();
      return {
        store: new VectorRagIndexStore(
          vectors,
          stores.owned<RagRecord>('rag', { ttlMs: RAG_KEEP_MS }),
          limit,
          clock.now,
        ),
        close: async () => {
          await vectors.close();
          await fixture.close();
        },
      };
    },
  })),
];

const a = { tenant: 'acme', keyId: 'ns/a' };
const b = { tenant: 'acme', keyId: 'ns/b' };
const g = { tenant: 'globex', keyId: 'ns/a' };

describe.each(variants)('RAG index ($name)', (variant) => {
  let opened: Opened | undefined;
  afterEach(async () => {
    await opened?.close();
    opened = undefined;
  });

  it('searches only the owner index of that name, best first', async () => {
    opened = await variant.open(100);
    const { store } = opened;
    await store.add(a, 'kb', 'emb', [chunk('d1', 0, 'east', [1, 0.1]), chunk('d1', 1, 'north', [0.1, 1])]);
    await store.add(g, 'kb', 'emb', [chunk('d2', 0, 'theirs', [1, 0])]);
    await store.add(b, 'kb', 'emb', [chunk('d3', 0, 'colleague', [1, 0])]);
    const hits = await store.search(a, 'kb', unitVector([1, 0]), 10);
    expect(hits.map((h) => h.chunk.text)).toEqual(['east', 'north']);
    expect(hits[0]!.chunk).toEqual({ documentId: 'd1', filename: 'd1.txt', chunkIndex: 0, text: 'east' });
    expect(hits[0]!.score).toBeCloseTo(1 / Math.hypot(1, 0.1), 4);
    expect(await store.search(a, 'other', unitVector([1, 0]), 10)).toEqual([]);
    expect(await store.info(a, 'kb')).toEqual({
      embeddingModel: 'emb',
      dimensions: 2,
      chunks: 2,
      documents: 1,
    });
    expect(await store.info(b, 'other')).toBeUndefined();
    expect((await store.search(g, 'kb', unitVector([1, 0]), 10)).map((h) => h.chunk.text)).toEqual([
      'theirs',
    ]);
  });

  it('refuses past the per-index bound and frees room when a document is deleted', async () => {
    opened = await variant.open(2);
    const { store } = opened;
    await store.add(a, 'kb', 'emb', [chunk('d1', 0, 'x', [1, 0]), chunk('d1', 1, 'y', [0, 1])]);
    await expect(store.add(a, 'kb', 'emb', [chunk('d2', 0, 'z', [1, 1])])).rejects.toBeInstanceOf(
      RagIndexFull,
    );
    expect(await store.deleteDocument(b, 'kb', 'd1')).toBe(false);
    expect(await store.deleteDocument(a, 'kb', 'd1')).toBe(true);
    expect(await store.info(a, 'kb')).toBeUndefined();
    expect(await store.search(a, 'kb', unitVector([1, 0]), 5)).toEqual([]);
    await store.add(a, 'kb', 'emb', [chunk('d2', 0, 'z', [1, 1])]);
    expect((await store.search(a, 'kb', unitVector([1, 0]), 5)).map((h) => h.chunk.text)).toEqual(['z']);
  });
});

describe('similarity', () => {
  it('scales to unit length and leaves a zero vector zero', () => {
    expect([...unitVector([3, 4])]).toEqual([expect.closeTo(0.6), expect.closeTo(0.8)]);
    expect([...unitVector([0, 0])]).toEqual([0, 0]);
  });

  it('returns the best k, best first, ties in input order', () => {
    const items = [
      [1, 0],
      [0, 1],
      [1, 0],
      [0.6, 0.8],
    ].map((v) => unitVector(v));
    const best = topK(unitVector([1, 0]), items, (v) => v, 3);
    expect(best.map((x) => items.indexOf(x.item))).toEqual([0, 2, 3]);
    expect(topK(unitVector([1, 0]), items, (v) => v, 0)).toEqual([]);
    expect(topK(unitVector([1, 0]), items, (v) => v, 50)).toHaveLength(4);
  });
});

describe('MemoryRagIndexStore', () => {
  const many = (n: number, doc = 'd') => Array.from({ length: n }, (_, i) => chunk(doc, i, 't', [1, 0]));

  it('bounds the chunks of every index together', async () => {
    const store = new MemoryRagIndexStore({ maxChunksPerIndex: 5, maxChunksTotal: 2 });
    await store.add(a, 'kb', 'emb', [chunk('d1', 0, 'x', [1, 0]), chunk('d1', 1, 'y', [0, 1])]);
    const refused = store.add(g, 'kb', 'emb', [chunk('d2', 0, 'z', [1, 1])]);
    await expect(refused).rejects.toBeInstanceOf(RagStorageFull);
    await expect(refused).rejects.toMatchObject({ scope: 'store', limit: 2 });
  });

  it('keeps room for other tenants when one fills every index it can (defaults)', async () => {
    const store = new MemoryRagIndexStore();
    // The attack: one key of one tenant fills index after index.
    let refusedAt: unknown;
    for (let ix = 0; ix < 5 && refusedAt === undefined; ix++)
      await store.add(a, `i${ix}`, 'emb', many(DEFAULT_MAX_CHUNKS_PER_INDEX)).catch((err: unknown) => {
        refusedAt = err;
      });
    expect(refusedAt).toBeInstanceOf(RagStorageFull);
    expect(refusedAt).toMatchObject({ scope: 'tenant', limit: DEFAULT_MAX_CHUNKS_PER_TENANT });
    expect((refusedAt as Error).message).toContain(`tenant quota of ${DEFAULT_MAX_CHUNKS_PER_TENANT} chunks`);
    // Another key of the same tenant shares its quota; another tenant is unaffected.
    await expect(store.add(b, 'kb', 'emb', many(1))).rejects.toBeInstanceOf(RagStorageFull);
    await expect(store.checkRoom(b, 'kb', 1)).rejects.toBeInstanceOf(RagStorageFull);
    await expect(store.checkRoom(g, 'default', 1)).resolves.toBeUndefined();
    expect((await store.add(g, 'default', 'emb', many(1))).chunks).toBe(1);
  });

  it('gives a tenant its quota back as it deletes documents', async () => {
    const store = new MemoryRagIndexStore({
      maxChunksPerIndex: 3,
      maxChunksPerTenant: 4,
      maxChunksTotal: 10,
    });
    await store.add(a, 'one', 'emb', many(3, 'd1'));
    await expect(store.add(a, 'two', 'emb', many(2, 'd2'))).rejects.toMatchObject({ scope: 'tenant' });
    // The per-index bound is named first: it is the one the caller can act on in that index.
    await expect(store.checkRoom(a, 'one', 1)).rejects.toBeInstanceOf(RagIndexFull);
    expect(await store.deleteDocument(a, 'one', 'd1')).toBe(true);
    expect((await store.add(b, 'two', 'emb', many(2, 'd2'))).chunks).toBe(2);
  });
});
