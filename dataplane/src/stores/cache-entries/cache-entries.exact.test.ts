/**
 * Exact-request digests beside the entries (the cache's exact tier), in process and in Redis:
 * a digest finds its entry only in its own partition, lives exactly as long as the entry, and
 * a digest whose entry is gone reads as a miss.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { fakeClock, type FakeClock } from '../testing/backends.ts';
import { MemoryCacheEntryStore } from './memory.ts';
import { partitionKey } from './partition.ts';
import { entryBackends, type EntryFixture } from './testing.ts';
import type { CacheEntry } from './types.ts';

const P = partitionKey('acme', 'openai', 'shape');
const D = 'd'.repeat(43);
const START = Date.parse('2025-03-14T12:00:00Z');

function entry(over: Partial<CacheEntry> = {}): CacheEntry {
  return {
    id: 'e1',
    partition: P,
    createdAt: START,
    expiresAt: START + 3_600_000,
    query: 'What is the capital of France?',
    response: {
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1741953600,
      model: 'gpt-4o-mini',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Paris.' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 14, completion_tokens: 2, total_tokens: 16 },
    },
    promptTokens: 14,
    completionTokens: 2,
    maxTokens: undefined,
    meta: undefined,
    ...over,
  };
}

describe.each(entryBackends)('exact digests ($name)', (backend) => {
  let fixture: EntryFixture | undefined;
  let clock: FakeClock;

  async function open(): Promise<EntryFixture> {
    clock = fakeClock(START);
    fixture = await backend.create(clock.now);
    return fixture;
  }

  afterEach(async () => {
    await fixture?.close();
    fixture = undefined;
  });

  it('finds the entry by its digest, only in its own partition', async () => {
    const { store } = await open();
    await store.put(entry(), D);
    expect((await store.getExact(P, D))?.id).toBe('e1');
    expect(await store.getExact(P, 'x'.repeat(43))).toBeUndefined();
    // Another tenant (or format, or shape) with the very same digest finds nothing.
    expect(await store.getExact(partitionKey('globex', 'openai', 'shape'), D)).toBeUndefined();
    expect(await store.getExact(partitionKey('acme', 'anthropic', 'shape'), D)).toBeUndefined();
    expect(await store.getExact(partitionKey('acme', 'openai', 'other'), D)).toBeUndefined();
  });

  it('writes no digest when none is given', async () => {
    const { store } = await open();
    await store.put(entry());
    expect(await store.get(P, 'e1')).toBeDefined();
    expect(await store.getExact(P, D)).toBeUndefined();
  });

  it('expires with its entry', async () => {
    const { store } = await open();
    await store.put(entry(), D);
    clock.advance(3_600_000);
    expect(await store.getExact(P, D)).toBeUndefined();
  });

  it('reads a digest whose entry was deleted as a miss', async () => {
    const { store } = await open();
    await store.put(entry(), D);
    expect(await store.delete(P, 'e1')).toBe(true);
    expect(await store.getExact(P, D)).toBeUndefined();
  });

  it('points at the newest answer to the same request', async () => {
    const { store } = await open();
    await store.put(entry(), D);
    await store.put(entry({ id: 'e2', response: { ...entry().response, id: 'chatcmpl-2' } }), D);
    expect((await store.getExact(P, D))?.id).toBe('e2');
    // The older entry is still there for the semantic path, and dropping it leaves the digest.
    await store.delete(P, 'e1');
    expect((await store.getExact(P, D))?.id).toBe('e2');
  });

  it('is flushed with its tenant, and counted neither by flush nor by stats', async () => {
    const { store, raw, prefix } = await open();
    const G = partitionKey('globex', 'openai', 'shape');
    await store.put(entry(), D);
    await store.put(entry({ id: 'g1', partition: G }), D);
    expect((await store.stats()).entries).toBe(2);
    expect(await store.flush('acme')).toBe(1);
    expect(await store.getExact(P, D)).toBeUndefined();
    expect((await store.getExact(G, D))?.id).toBe('g1');
    if (raw) {
      expect(await raw.keys(`${prefix}:{acme}:*`)).toEqual([]);
      expect(await raw.keys(`${prefix}:{globex}:cache-exact:*`)).toHaveLength(1);
    }
    expect(await store.flush()).toBe(1);
    expect(await store.getExact(G, D)).toBeUndefined();
  });

  it('refuses malformed digests', async () => {
    const { store } = await open();
    await expect(store.put(entry(), 'a:b*c')).rejects.toThrow(/digest/);
    await expect(store.getExact(P, 'short')).rejects.toThrow(/digest/);
  });

  it('gives the digest the entry’s TTL in Redis', async () => {
    const { store, raw, prefix } = await open();
    if (!raw) return expect(backend.name).toBe('memory');
    await store.put(entry(), D);
    const [x] = await raw.keys(`${prefix}:{acme}:cache-exact:*`);
    const [e] = await raw.keys(`${prefix}:{acme}:cache:*`);
    expect(await raw.get(x!)).toBe('e1');
    const [px, pe] = [await raw.pttl(x!), await raw.pttl(e!)];
    expect(Math.abs(px - pe)).toBeLessThan(1_000);
    expect(pe).toBeGreaterThan(3_500_000);
  });
});

describe('exact digests (memory) bounds', () => {
  it('drops an evicted entry’s digest with it', async () => {
    const store = new MemoryCacheEntryStore({ clock: () => START, maxEntries: 100, maxEntriesPerTenant: 2 });
    const digest = (i: number) => `${i}`.padStart(43, 'x');
    for (let i = 0; i < 5; i++) await store.put(entry({ id: `e${i}` }), digest(i));
    // The tenant's two newest entries remain, reachable by digest; the rest are gone with theirs.
    const found = await Promise.all(
      [0, 1, 2, 3, 4].map(async (i) => (await store.getExact(P, digest(i)))?.id),
    );
    expect(found).toEqual([undefined, undefined, undefined, 'e3', 'e4']);
    expect((await store.stats('acme')).entries).toBe(2);
  });

  it('counts the digest in the entry’s bytes', async () => {
    const a = new MemoryCacheEntryStore({ clock: () => START });
    const b = new MemoryCacheEntryStore({ clock: () => START });
    await a.put(entry());
    await b.put(entry(), D);
    expect((await b.stats()).memoryBytes).toBeGreaterThan((await a.stats()).memoryBytes + D.length * 2);
  });
});
