/**
 * One behavioural suite for RAG indexes: in process, vector-backed over in-process parts,
 * and vector-backed over Milvus Lite and Redis (what several pods share).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Stores } from '../index.ts';
import type { OwnedStore } from '../owned/types.ts';
import { backends, fakeClock, type FakeClock, type StoreFixture } from '../testing/backends.ts';
import { memoryVectors, milvusVectors } from '../vectors/testing.ts';
import type { VectorIndex } from '../vectors/types.ts';
import {
  DEFAULT_MAX_CHUNKS_PER_INDEX,
  DEFAULT_MAX_CHUNKS_PER_TENANT,
  MemoryRagIndexStore,
} from './memory.ts';
import { RAG_HOLD_MS, type RagUsage } from './quota/types.ts';
import { topK, unitVector } from './similarity.ts';
import {
  RagIndexFull,
  RagModelMismatch,
  RagStorageFull,
  type RagIndexStore,
  type StoredChunk,
} from './types.ts';
import { RAG_KEEP_MS, ragPartition, VectorRagIndexStore, type RagRecord } from './vector-backed.ts';

interface Bounds {
  perIndex: number;
  perTenant?: number;
  total?: number;
}

const chunk = (documentId: string, i: number, text: string, v: number[]): StoredChunk => ({
  documentId,
  filename: `${documentId}.txt`,
  chunkIndex: i,
  text,
  vector: unitVector(v),
});

const many = (n: number, doc = 'd') => Array.from({ length: n }, (_, i) => chunk(doc, i, 't', [1, 0]));

interface Opened {
  store: RagIndexStore;
  close(): Promise<void>;
}

const [memoryStores, redisStores] = backends;

/** Vectors whose upserts fail on demand: a Milvus outage in the middle of an ingest. */
class FailingVectors implements VectorIndex {
  failUpserts = false;
  /** Deletes that succeed before the rest fail (Infinity: none fail). */
  deletesLeft = Infinity;
  constructor(private readonly inner: VectorIndex) {}
  get backend() {
    return this.inner.backend;
  }
  async upsert(partition: string, id: string, vector: Float32Array, expiresAt: number): Promise<void> {
    if (this.failUpserts) throw new Error('vector store unavailable');
    await this.inner.upsert(partition, id, vector, expiresAt);
  }
  search(partition: string, vector: Float32Array, k: number) {
    return this.inner.search(partition, vector, k);
  }
  async delete(partition: string, id: string) {
    if (this.deletesLeft <= 0) throw new Error('vector store unavailable');
    this.deletesLeft--;
    return this.inner.delete(partition, id);
  }
  flush(tenant?: string) {
    return this.inner.flush(tenant);
  }
  sweep() {
    return this.inner.sweep();
  }
  stats(tenant?: string) {
    return this.inner.stats(tenant);
  }
  close() {
    return this.inner.close();
  }
}

interface SharedOpened extends Opened {
  store: VectorRagIndexStore;
  vectors: FailingVectors;
  /** The same shared store as another pod sees it (for Redis, its own client). */
  another(): Promise<VectorRagIndexStore>;
  usage(tenant: string): Promise<RagUsage>;
  clock: FakeClock;
  records: OwnedStore<RagRecord>;
}

const sharedVariants = [
  { name: 'vector-backed (in process)', vectors: memoryVectors, records: memoryStores! },
  { name: 'vector-backed (Milvus + Redis)', vectors: milvusVectors, records: redisStores! },
].map((v) => ({
  name: v.name,
  async open(bounds: Bounds): Promise<SharedOpened> {
    const clock = fakeClock();
    const vectors = new FailingVectors(await v.vectors.create(clock.now));
    const fixture: StoreFixture = await v.records.create({ clock: clock.now });
    const limits = { perTenant: 1_000_000, total: 10_000_000, ...bounds };
    const first = await fixture.open();
    const make = async (stores?: Stores) => {
      stores ??= await fixture.open();
      return new VectorRagIndexStore(
        vectors,
        stores.owned<RagRecord>('rag', { ttlMs: RAG_KEEP_MS }),
        stores.ragQuota,
        limits,
        clock.now,
      );
    };
    return {
      store: await make(first),
      vectors,
      // In process, owned objects and the ledger live in the Stores object: a second handle is that one.
      another: () => make(v.records.name === 'memory' ? first : undefined),
      usage: (tenant) => first.ragQuota.usage(tenant),
      records: first.owned<RagRecord>('rag', { ttlMs: RAG_KEEP_MS }),
      clock,
      close: async () => {
        await vectors.close();
        await fixture.close();
      },
    };
  },
}));

const variants: { name: string; open(bounds: Bounds): Promise<Opened> }[] = [
  {
    name: 'memory',
    open: async (bounds) => ({
      store: new MemoryRagIndexStore({
        maxChunksPerIndex: bounds.perIndex,
        maxChunksPerTenant: bounds.perTenant,
        maxChunksTotal: bounds.total,
      }),
      close: async () => {},
    }),
  },
  ...sharedVariants,
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
    opened = await variant.open({ perIndex: 100 });
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
    opened = await variant.open({ perIndex: 2 });
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

  it('counts holds against the per-index bound, so overlapping ingests cannot both take its last room', async () => {
    opened = await variant.open({ perIndex: 10 });
    const { store } = opened;
    await store.add(a, 'kb', 'emb', many(4, 'd0'));
    const first = await store.reserve(a, 'kb', 5);
    const second = store.reserve(a, 'kb', 5);
    await expect(second).rejects.toBeInstanceOf(RagIndexFull);
    await expect(second).rejects.toMatchObject({ limit: 10, held: 9 });
    // Another index of the same owner is not this one.
    await expect(store.reserve(a, 'other', 5)).resolves.toMatchObject({ chunks: 5 });
    expect((await store.add(a, 'kb', 'emb', many(5, 'd1'), first)).chunks).toBe(9);
    await expect(store.reserve(a, 'kb', 2)).rejects.toBeInstanceOf(RagIndexFull);
    // A returned hold gives its index's room back.
    const last = await store.reserve(a, 'kb', 1);
    await store.release(last);
    expect((await store.add(a, 'kb', 'emb', many(1, 'd2'))).chunks).toBe(10);
  });

  it('holds a tenant to its quota across its indexes and keys; another tenant still adds', async () => {
    opened = await variant.open({ perIndex: 10, perTenant: 5, total: 100 });
    const { store } = opened;
    await store.add(a, 'one', 'emb', many(3, 'd1'));
    await store.add(b, 'two', 'emb', many(2, 'd2'));
    const refused = store.reserve(a, 'three', 1);
    await expect(refused).rejects.toBeInstanceOf(RagStorageFull);
    await expect(refused).rejects.toMatchObject({ scope: 'tenant', limit: 5, held: 5, adding: 1 });
    await expect(store.add(b, 'four', 'emb', many(1, 'd3'))).rejects.toBeInstanceOf(RagStorageFull);
    expect((await store.add(g, 'one', 'emb', many(5, 'd4'))).chunks).toBe(5);
  });

  it('bounds every tenant together', async () => {
    opened = await variant.open({ perIndex: 10, perTenant: 5, total: 6 });
    const { store } = opened;
    await store.add(a, 'kb', 'emb', many(4));
    await expect(store.reserve(g, 'kb', 3)).rejects.toMatchObject({ scope: 'store', limit: 6, held: 4 });
    expect((await store.add(g, 'kb', 'emb', many(2))).chunks).toBe(2);
  });

  it('counts a hold until its document is added or the hold is released', async () => {
    opened = await variant.open({ perIndex: 10, perTenant: 4 });
    const { store } = opened;
    const first = await store.reserve(a, 'kb', 3);
    await expect(store.reserve(b, 'other', 2)).rejects.toMatchObject({ scope: 'tenant', held: 3 });
    await store.release(first);
    const second = await store.reserve(b, 'other', 2);
    expect((await store.add(b, 'other', 'emb', many(2), second)).chunks).toBe(2);
    // Released after a successful add (as runIngest's error path might): nothing changes.
    await store.release(second);
    await store.reserve(a, 'kb', 2);
    await expect(store.reserve(a, 'kb', 1)).rejects.toMatchObject({ scope: 'tenant', held: 4 });
  });

  it('frees the chunks of a deleted index, for its owner only', async () => {
    opened = await variant.open({ perIndex: 10, perTenant: 4 });
    const { store } = opened;
    await store.add(a, 'kb', 'emb', many(2, 'd1'));
    await store.add(a, 'kb', 'emb', many(2, 'd2'));
    await expect(store.reserve(a, 'other', 1)).rejects.toBeInstanceOf(RagStorageFull);
    expect(await store.deleteIndex(b, 'kb')).toBe(false);
    expect(await store.deleteIndex(a, 'kb')).toBe(true);
    expect(await store.info(a, 'kb')).toBeUndefined();
    expect(await store.search(a, 'kb', unitVector([1, 0]), 5)).toEqual([]);
    expect((await store.add(a, 'other', 'emb', many(4, 'd3'))).chunks).toBe(4);
    expect(await store.deleteIndex(a, 'kb')).toBe(false);
  });
});

describe.each(sharedVariants)('shared RAG quota ($name)', (variant) => {
  let opened: SharedOpened | undefined;
  afterEach(async () => {
    await opened?.close();
    opened = undefined;
  });

  it('admits exactly the quota when two pods race for the last room', async () => {
    opened = await variant.open({ perIndex: 100, perTenant: 30 });
    const pods = [opened.store, await opened.another()];
    const results = await Promise.allSettled(
      Array.from({ length: 16 }, (_, n) => pods[n % 2]!.add(n % 3 ? a : b, `i${n}`, 'emb', many(3, `d${n}`))),
    );
    const admitted = results.filter((r) => r.status === 'fulfilled');
    expect(admitted).toHaveLength(10);
    for (const r of results)
      if (r.status === 'rejected') expect(r.reason).toMatchObject({ scope: 'tenant', limit: 30 });
    expect(await opened.usage('acme')).toEqual({ tenant: 30, total: 30 });
  });

  it('admits exactly the per-index bound when two pods ingest into one index at once', async () => {
    opened = await variant.open({ perIndex: 10 });
    const pods = [opened.store, await opened.another()];
    await pods[0]!.add(a, 'kb', 'emb', many(4, 'd0'));
    const holds = await Promise.allSettled([pods[0]!.reserve(a, 'kb', 5), pods[1]!.reserve(a, 'kb', 5)]);
    expect(holds.map((h) => h.status).sort()).toEqual(['fulfilled', 'rejected']);
    const results = await Promise.allSettled(
      holds.map((h, n) =>
        h.status === 'fulfilled' ? pods[n]!.add(a, 'kb', 'emb', many(5, `d${n + 1}`), h.value) : undefined,
      ),
    );
    expect(results.every((r) => r.status === 'fulfilled')).toBe(true);
    expect(await pods[1]!.info(a, 'kb')).toMatchObject({ chunks: 9, documents: 2 });
  });

  it('lets one of two first ingests with different embedding models create the index', async () => {
    opened = await variant.open({ perIndex: 100 });
    const pods = [opened.store, await opened.another()];
    const docs = [
      { model: 'model-a', chunks: [chunk('d1', 0, 'x', [1, 0])] },
      { model: 'model-b', chunks: [chunk('d2', 0, 'y', [1, 0, 0, 1])] },
    ];
    const holds = await Promise.all(docs.map((d, n) => pods[n]!.reserve(a, 'kb', d.chunks.length)));
    const results = await Promise.allSettled(
      docs.map((d, n) => pods[n]!.add(a, 'kb', d.model, d.chunks, holds[n])),
    );
    const won = results.findIndex((r) => r.status === 'fulfilled');
    const lost = results.find((r) => r.status === 'rejected');
    expect(won).toBeGreaterThanOrEqual(0);
    expect(lost?.reason).toBeInstanceOf(RagModelMismatch);
    expect(lost?.reason).toMatchObject({ embeddingModel: docs[won]!.model });
    expect(await pods[0]!.info(a, 'kb')).toMatchObject({ embeddingModel: docs[won]!.model, documents: 1 });
    expect(await opened.usage('acme')).toEqual({ tenant: 1, total: 1 });
  });

  it('gives an index emptied document by document to whichever model comes next', async () => {
    opened = await variant.open({ perIndex: 100 });
    const { store } = opened;
    await store.add(a, 'kb', 'model-a', many(2, 'd1'));
    expect(await store.deleteDocument(a, 'kb', 'd1')).toBe(true);
    expect((await store.add(a, 'kb', 'model-b', many(1, 'd2'))).embeddingModel).toBe('model-b');
  });

  it('keeps every document when ingests into one index finish together on two pods', async () => {
    opened = await variant.open({ perIndex: 100 });
    const pods = [opened.store, await opened.another()];
    await Promise.all(
      Array.from({ length: 6 }, (_, n) =>
        pods[n % 2]!.add(a, 'kb', 'emb', [
          chunk(`d${n}`, 0, `text ${n}`, [1, n]),
          chunk(`d${n}`, 1, 'x', [n, 1]),
        ]),
      ),
    );
    expect(await pods[1]!.info(a, 'kb')).toEqual({
      embeddingModel: 'emb',
      dimensions: 2,
      chunks: 12,
      documents: 6,
    });
    const hits = await pods[0]!.search(a, 'kb', unitVector([1, 0]), 12);
    expect(new Set(hits.map((h) => h.chunk.documentId)).size).toBe(6);
  });

  it('still serves and deletes documents recorded before the ledger existed', async () => {
    opened = await variant.open({ perIndex: 100, perTenant: 10 });
    const { store, records, vectors, clock } = opened;
    // What an index written by the earlier version holds: its documents in the index record.
    await records.put(a, 'index\u0000kb', { embeddingModel: 'emb', dimensions: 2, documents: { old: 1 } });
    await records.put(a, 'chunk\u0000kb\u0000old\u00000', {
      documentId: 'old',
      filename: 'old.txt',
      chunkIndex: 0,
      text: 'legacy',
    });
    await vectors.upsert(ragPartition(a, 'kb'), 'old:0', unitVector([1, 0]), clock.now() + RAG_KEEP_MS);
    expect(await store.info(a, 'kb')).toMatchObject({ chunks: 1, documents: 1 });
    expect((await store.add(a, 'kb', 'emb', many(2, 'd1'))).chunks).toBe(3);
    const hits = await store.search(a, 'kb', unitVector([1, 0]), 5);
    expect(hits.map((h) => h.chunk.text)).toContain('legacy');
    expect(await store.deleteDocument(a, 'kb', 'old')).toBe(true);
    expect(await store.info(a, 'kb')).toMatchObject({ chunks: 2, documents: 1 });
    expect((await store.search(a, 'kb', unitVector([1, 0]), 5)).map((h) => h.chunk.text)).not.toContain(
      'legacy',
    );
    expect(await opened.usage('acme')).toMatchObject({ tenant: 2 });
  });

  it('hands the room back and removes what it wrote when an add fails halfway', async () => {
    opened = await variant.open({ perIndex: 100, perTenant: 4 });
    const { store, vectors } = opened;
    vectors.failUpserts = true;
    await expect(store.add(a, 'kb', 'emb', many(4, 'd1'))).rejects.toThrow('vector store unavailable');
    vectors.failUpserts = false;
    expect(await opened.usage('acme')).toEqual({ tenant: 0, total: 0 });
    expect(await store.info(a, 'kb')).toBeUndefined();
    expect((await store.add(a, 'kb', 'emb', many(4, 'd2'))).chunks).toBe(4);
  });

  it('frees a document once when two pods delete it at the same time', async () => {
    opened = await variant.open({ perIndex: 100, perTenant: 4 });
    const other = await opened.another();
    await opened.store.add(a, 'kb', 'emb', many(2, 'd1'));
    await opened.store.add(a, 'kb', 'emb', many(2, 'd2'));
    const deleted = await Promise.all([
      opened.store.deleteDocument(a, 'kb', 'd1'),
      other.deleteDocument(a, 'kb', 'd1'),
    ]);
    expect(deleted).toContain(true);
    expect(await opened.usage('acme')).toEqual({ tenant: 2, total: 2 });
    await expect(opened.store.reserve(a, 'kb', 3)).rejects.toMatchObject({ scope: 'tenant', held: 2 });
  });

  it('keeps counting a document whose delete failed midway, and a retried delete finishes it', async () => {
    opened = await variant.open({ perIndex: 100, perTenant: 10 });
    const { store, vectors } = opened;
    await store.add(a, 'kb', 'emb', many(4, 'd1'));
    await store.add(a, 'kb', 'emb', many(2, 'd2'));
    vectors.deletesLeft = 2;
    await expect(store.deleteDocument(a, 'kb', 'd1')).rejects.toThrow('vector store unavailable');
    vectors.deletesLeft = Infinity;
    // What is left of d1 is still counted, so it cannot be lost to the quota.
    expect(await opened.usage('acme')).toEqual({ tenant: 6, total: 6 });
    expect(await store.deleteDocument(a, 'kb', 'd1')).toBe(true);
    expect(await opened.usage('acme')).toEqual({ tenant: 2, total: 2 });
    expect(await store.info(a, 'kb')).toMatchObject({ chunks: 2, documents: 1 });
    expect(await store.deleteDocument(a, 'kb', 'd1')).toBe(false);
  });

  it('keeps counting an index whose delete failed midway, hides it, and a retried delete finishes it', async () => {
    opened = await variant.open({ perIndex: 100, perTenant: 10 });
    const { store, vectors } = opened;
    await store.add(a, 'kb', 'emb', many(3, 'd1'));
    await store.add(a, 'kb', 'emb', many(3, 'd2'));
    vectors.deletesLeft = 4;
    await expect(store.deleteIndex(a, 'kb')).rejects.toThrow('vector store unavailable');
    vectors.deletesLeft = Infinity;
    expect(await opened.usage('acme')).toEqual({ tenant: 6, total: 6 });
    expect(await store.search(a, 'kb', unitVector([1, 0]), 10)).toEqual([]);
    expect(await store.deleteIndex(a, 'kb')).toBe(true);
    expect(await opened.usage('acme')).toEqual({ tenant: 0, total: 0 });
    expect(await store.info(a, 'kb')).toBeUndefined();
    expect(await store.deleteIndex(a, 'kb')).toBe(false);
    // The name is free again, for any embedding model.
    expect((await store.add(a, 'kb', 'other-emb', many(1, 'd3'))).embeddingModel).toBe('other-emb');
  });

  it('lets the hold of a pod that died mid-ingest lapse', async () => {
    opened = await variant.open({ perIndex: 100, perTenant: 4 });
    const { store, clock } = opened;
    await store.reserve(a, 'kb', 4);
    await expect(store.reserve(g, 'kb', 1)).resolves.toMatchObject({ chunks: 1 });
    await expect(store.reserve(b, 'kb', 1)).rejects.toMatchObject({ scope: 'tenant', held: 4 });
    clock.advance(RAG_HOLD_MS + 1);
    await expect(store.reserve(b, 'kb', 4)).resolves.toMatchObject({ chunks: 4 });
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
    await expect(store.reserve(b, 'kb', 1)).rejects.toBeInstanceOf(RagStorageFull);
    await expect(store.reserve(g, 'default', 1)).resolves.toMatchObject({ chunks: 1 });
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
    await expect(store.reserve(a, 'one', 1)).rejects.toBeInstanceOf(RagIndexFull);
    expect(await store.deleteDocument(a, 'one', 'd1')).toBe(true);
    expect((await store.add(b, 'two', 'emb', many(2, 'd2'))).chunks).toBe(2);
  });
});
