/**
 * Milvus going away mid-run, against a private Milvus Lite server: every operation rejects
 * quickly with StoreUnavailableError (the cache fails open on it), stats() reports it, and
 * the index recovers — recreating its collection — when Milvus is back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMilvus, type MilvusInstance } from '../../../../../test/harness/milvus.ts';
import { partitionKey } from '../../cache-entries/partition.ts';
import { StoreUnavailableError } from '../../errors.ts';
import { MilvusVectorIndex } from './index.ts';

const P = partitionKey('acme', 'openai', 'shape');
const v = Float32Array.from({ length: 8 }, (_, i) => (i === 0 ? 1 : 0));
const later = () => Date.now() + 60_000;

async function timed(p: Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const start = performance.now();
  try {
    await p;
    return { error: undefined, ms: performance.now() - start };
  } catch (error) {
    return { error, ms: performance.now() - start };
  }
}

describe('milvus vector index when Milvus is unavailable', () => {
  let milvus: MilvusInstance;
  let index: MilvusVectorIndex;

  beforeAll(async () => {
    milvus = await startMilvus();
    index = new MilvusVectorIndex({
      address: milvus.address,
      prefix: 'u',
      consistency: 'Strong',
      timeoutMs: 1000,
    });
    await index.ready();
  });

  afterAll(async () => {
    await index?.close();
    await milvus?.stop();
  });

  it('rejects every operation with StoreUnavailableError while the server is down, then recovers', async () => {
    await index.upsert(P, 'a', v, later());
    expect((await index.search(P, v, 1)).map((h) => h.id)).toEqual(['a']);
    await milvus.stop();
    const operations = {
      'vectors.upsert': () => index.upsert(P, 'b', v, later()),
      'vectors.search': () => index.search(P, v, 1),
      'vectors.delete': () => index.delete(P, 'a'),
      'vectors.flush': () => index.flush(),
      'vectors.sweep': () => index.sweep(),
      'vectors.health': () => index.ready(),
    };
    for (const [name, op] of Object.entries(operations)) {
      const { error, ms } = await timed(op());
      expect(error, name).toBeInstanceOf(StoreUnavailableError);
      expect(ms, name).toBeLessThan(2500);
    }
    expect(await index.stats()).toMatchObject({ backend: 'milvus', status: 'unavailable', entries: 0 });

    // Back, empty (a restarted Lite server starts from a fresh directory): the collection is recreated.
    await milvus.restart();
    await index.ready();
    expect(await index.search(P, v, 1)).toEqual([]);
    await index.upsert(P, 'c', v, later());
    expect((await index.search(P, v, 1)).map((h) => h.id)).toEqual(['c']);
    expect(await index.stats()).toMatchObject({ status: 'ok', entries: 1 });
  });

  it('times out on a hung server', async () => {
    milvus.pause();
    try {
      const { error, ms } = await timed(index.search(P, v, 1));
      expect(error).toBeInstanceOf(StoreUnavailableError);
      expect(ms).toBeLessThan(2500);
    } finally {
      milvus.resume();
    }
    await index.ready();
  });

  it('a client for an address where nothing listens fails with StoreUnavailableError', async () => {
    const dead = new MilvusVectorIndex({ address: '127.0.0.1:1', timeoutMs: 500 });
    try {
      await expect(dead.ready()).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(dead.search(P, v, 1)).rejects.toBeInstanceOf(StoreUnavailableError);
      expect((await dead.stats()).status).toBe('unavailable');
    } finally {
      await dead.close();
    }
  });
});
