import { describe, expect, it } from 'vitest';
import { MemoryRagIndexStore } from './memory.ts';
import { topK, unitVector } from './similarity.ts';
import { RagIndexFull, type StoredChunk } from './types.ts';

const chunk = (documentId: string, text: string, v: number[]): StoredChunk => ({
  documentId,
  filename: `${documentId}.txt`,
  chunkIndex: 0,
  text,
  vector: unitVector(v),
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
    expect(best.map((b) => items.indexOf(b.item))).toEqual([0, 2, 3]);
    expect(topK(unitVector([1, 0]), items, (v) => v, 0)).toEqual([]);
    expect(topK(unitVector([1, 0]), items, (v) => v, 50)).toHaveLength(4);
  });
});

describe('MemoryRagIndexStore', () => {
  const a = { tenant: 'acme', keyId: 'ns/a' };
  const b = { tenant: 'acme', keyId: 'ns/b' };
  const g = { tenant: 'globex', keyId: 'ns/a' };

  it('searches only the owner index of that name', async () => {
    const store = new MemoryRagIndexStore();
    await store.add(a, 'kb', 'emb', [chunk('d1', 'mine', [1, 0])]);
    await store.add(g, 'kb', 'emb', [chunk('d2', 'theirs', [1, 0])]);
    expect((await store.search(a, 'kb', unitVector([1, 0]), 10)).map((h) => h.chunk.text)).toEqual(['mine']);
    expect(await store.search(b, 'kb', unitVector([1, 0]), 10)).toEqual([]);
    expect(await store.search(a, 'other', unitVector([1, 0]), 10)).toEqual([]);
    expect(await store.info(b, 'kb')).toBeUndefined();
    expect(await store.info(a, 'kb')).toEqual({
      embeddingModel: 'emb',
      dimensions: 2,
      chunks: 1,
      documents: 1,
    });
  });

  it('refuses past its bounds and frees room when a document is deleted', async () => {
    const store = new MemoryRagIndexStore({ maxChunksPerIndex: 2, maxChunksTotal: 3 });
    await store.add(a, 'kb', 'emb', [chunk('d1', 'x', [1, 0]), chunk('d1', 'y', [0, 1])]);
    await expect(store.add(a, 'kb', 'emb', [chunk('d2', 'z', [1, 1])])).rejects.toBeInstanceOf(RagIndexFull);
    await store.add(b, 'kb', 'emb', [chunk('d3', 'z', [1, 1])]);
    await expect(store.add(g, 'kb', 'emb', [chunk('d4', 'z', [1, 1])])).rejects.toBeInstanceOf(RagIndexFull);
    expect(await store.deleteDocument(b, 'kb', 'd1')).toBe(false);
    expect(await store.deleteDocument(a, 'kb', 'd1')).toBe(true);
    expect(await store.info(a, 'kb')).toBeUndefined();
    await store.add(g, 'kb', 'emb', [chunk('d4', 'z', [1, 1])]);
  });
});
