/** One behavioural suite, run against the in-process and the Redis cache entry store. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fakeClock, type FakeClock } from '../testing/backends.ts';
import { MemoryCacheEntryStore } from './memory.ts';
import { partitionKey } from './partition.ts';
import { entryBackends, type EntryFixture } from './testing.ts';
import type { CacheEntry } from './types.ts';

const P = partitionKey('acme', 'openai', 'shape');

function entry(over: Partial<CacheEntry> = {}): CacheEntry {
  return {
    id: 'e1',
    partition: P,
    createdAt: Date.parse('2025-03-14T12:00:00Z'),
    expiresAt: Date.parse('2025-03-14T13:00:00Z'),
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
    meta: 'faq-7',
    ...over,
  };
}

describe.each(entryBackends)('cache entries ($name)', (backend) => {
  let fixture: EntryFixture | undefined;
  let clock: FakeClock;

  async function open(): Promise<EntryFixture> {
    clock = fakeClock(Date.parse('2025-03-14T12:00:00Z'));
    fixture = await backend.create(clock.now);
    return fixture;
  }

  afterEach(async () => {
    await fixture?.close();
    fixture = undefined;
  });

  it('stores and returns an entry unchanged', async () => {
    const { store } = await open();
    const e = entry();
    await store.put(e);
    const got = await store.get(P, 'e1');
    expect(got).toEqual({ ...e, maxTokens: undefined });
    // Stored by value: changing what was put or got does not change the store.
    e.query = 'changed';
    if (got) got.response.choices[0]!.message.content = 'changed';
    expect((await store.get(P, 'e1'))?.query).toBe('What is the capital of France?');
    expect((await store.get(P, 'e1'))?.response.choices[0]?.message.content).toBe('Paris.');
  });

  it('returns undefined for an unknown id or partition', async () => {
    const { store } = await open();
    await store.put(entry());
    expect(await store.get(P, 'nope')).toBeUndefined();
    expect(await store.get(partitionKey('acme', 'openai', 'other'), 'e1')).toBeUndefined();
  });

  it('never answers from another tenant, format or shape, even under the same id', async () => {
    const { store } = await open();
    const others = [
      partitionKey('tenant-b', 'openai', 'shape'),
      partitionKey('acme', 'anthropic', 'shape'),
      partitionKey('acme', 'openai', 'shape2'),
      partitionKey('acm', 'openai', 'shape'),
    ];
    await store.put(entry());
    for (const p of others) expect(await store.get(p, 'e1'), p).toBeUndefined();
    for (const [i, p] of others.entries()) await store.put(entry({ partition: p, query: `q${i}` }));
    expect((await store.get(P, 'e1'))?.query).toBe('What is the capital of France?');
    for (const [i, p] of others.entries()) expect((await store.get(p, 'e1'))?.query).toBe(`q${i}`);
  });

  it('expires entries at expiresAt', async () => {
    const { store } = await open();
    await store.put(entry({ expiresAt: clock.now() + 1000 }));
    expect(await store.get(P, 'e1')).toBeDefined();
    clock.advance(999);
    expect(await store.get(P, 'e1')).toBeDefined();
    clock.advance(1);
    expect(await store.get(P, 'e1')).toBeUndefined();
  });

  it('does not store an entry that has already expired, and drops the one it replaces', async () => {
    const { store } = await open();
    await store.put(entry());
    await store.put(entry({ expiresAt: clock.now() }));
    expect(await store.get(P, 'e1')).toBeUndefined();
  });

  it('deletes', async () => {
    const { store } = await open();
    await store.put(entry());
    expect(await store.delete(P, 'e1')).toBe(true);
    expect(await store.get(P, 'e1')).toBeUndefined();
    expect(await store.delete(P, 'e1')).toBe(false);
  });

  it('flushes one tenant, then everything, and counts entries', async () => {
    const { store } = await open();
    const a2 = partitionKey('acme', 'anthropic', 'shape');
    const b = partitionKey('b*[?]', 'openai', 'shape');
    await store.put(entry());
    await store.put(entry({ partition: a2 }));
    await store.put(entry({ partition: b }));
    const stats = await store.stats();
    expect(stats).toMatchObject({ backend: backend.name, status: 'ok', entries: 3 });
    expect(stats.memoryBytes).toBeGreaterThan(100);
    // One tenant's share, and a tenant whose name is a glob matches only itself.
    const acme = await store.stats('acme');
    expect(acme.entries).toBe(2);
    expect(acme.memoryBytes).toBeGreaterThan(0);
    expect(acme.memoryBytes).toBeLessThan(stats.memoryBytes);
    expect((await store.stats('b*[?]')).entries).toBe(1);
    expect((await store.stats('b*')).entries).toBe(0);
    expect(await store.flush('acme')).toBe(2);
    expect(await store.get(P, 'e1')).toBeUndefined();
    expect(await store.get(b, 'e1')).toBeDefined();
    // Glob characters in a tenant name match only that tenant.
    expect(await store.flush('b*')).toBe(0);
    expect(await store.flush()).toBe(1);
    expect((await store.stats()).entries).toBe(0);
  });

  it('counts only live entries: expired, replaced and deleted ones drop out of stats', async () => {
    const { store } = await open();
    await store.put(entry({ id: 'short', expiresAt: clock.now() + 1000 }));
    await store.put(entry({ id: 'long' }));
    await store.put(entry({ id: 'gone' }));
    const three = await store.stats('acme');
    expect(three.entries).toBe(3);
    // The same id again replaces its entry: counted once, at its new size.
    await store.put(entry({ id: 'long', query: 'a longer question than the one before it' }));
    const replaced = await store.stats('acme');
    expect(replaced.entries).toBe(3);
    expect(replaced.memoryBytes).toBeGreaterThan(three.memoryBytes);
    await store.delete(P, 'gone');
    expect((await store.stats('acme')).entries).toBe(2);
    clock.advance(1000);
    const live = await store.stats('acme');
    expect(live.entries).toBe(1);
    expect(live.memoryBytes).toBeLessThan(replaced.memoryBytes);
    expect((await store.stats()).entries).toBe(1);
    expect(await store.flush('acme')).toBe(1);
    expect(await store.stats('acme')).toMatchObject({ entries: 0, memoryBytes: 0 });
  });

  it('refuses malformed partition keys', async () => {
    const { store } = await open();
    await expect(store.get('acme/x', 'e1')).rejects.toBeInstanceOf(TypeError);
    await expect(store.put(entry({ partition: 'a b/openai/x' }))).rejects.toBeInstanceOf(TypeError);
  });
});

describe('cache entries (redis) expiry in Redis itself', () => {
  it('lets Redis drop the key at expiresAt', async () => {
    const backend = entryBackends.find((b) => b.name === 'redis');
    const fixture = await backend!.create(Date.now);
    try {
      await fixture.store.put(entry({ expiresAt: Date.now() + 150 }));
      const key = `${fixture.prefix}:{acme}:cache:openai/shape:e1`;
      // The entry and the tenant's bookkeeping beside it (index, sizes, totals), all with a TTL.
      const keys = await fixture.raw!.keys(`${fixture.prefix}:{acme}:*`);
      expect(keys.sort()).toEqual(
        [key, ...['index', 'sizes', 'totals'].map((k) => `${fixture.prefix}:{acme}:cache-${k}`)].sort(),
      );
      for (const k of keys) expect(await fixture.raw!.pttl(k)).toBeGreaterThan(0);
      // Waits on the condition itself (KEYS skips expired keys), not on a guess at Redis's timing.
      await vi.waitFor(
        async () => expect(await fixture.raw!.keys(`${fixture.prefix}:{acme}:*`)).toEqual([]),
        { timeout: 10_000, interval: 25 },
      );
    } finally {
      await fixture.close();
    }
  });
});

describe('cache entries (memory) bounds', () => {
  const of = (tenant: string) => partitionKey(tenant, 'openai', 'shape');

  it('one tenant flooding the store never evicts another tenant below its share', async () => {
    const store = new MemoryCacheEntryStore({ clock: () => 0, maxEntries: 10, maxBytes: 1_000_000 });
    for (let i = 0; i < 3; i++)
      await store.put(entry({ id: `quiet${i}`, partition: of('quiet'), expiresAt: 100 }));
    for (let i = 0; i < 500; i++)
      await store.put(entry({ id: `noisy${i}`, partition: of('noisy'), expiresAt: 100 }));
    for (let i = 0; i < 3; i++) expect(await store.get(of('quiet'), `quiet${i}`)).toBeDefined();
    expect((await store.stats('noisy')).entries).toBe(7);
    expect(await store.get(of('noisy'), 'noisy499')).toBeDefined();
    expect(await store.get(of('noisy'), 'noisy492')).toBeUndefined();
  });

  it('caps each tenant on its own bound too', async () => {
    const store = new MemoryCacheEntryStore({ clock: () => 0, maxEntries: 100, maxEntriesPerTenant: 4 });
    for (let i = 0; i < 10; i++) await store.put(entry({ id: `e${i}`, partition: of('a'), expiresAt: 100 }));
    await store.put(entry({ id: 'b0', partition: of('b'), expiresAt: 100 }));
    expect((await store.stats('a')).entries).toBe(4);
    expect((await store.stats('b')).entries).toBe(1);
    expect(await store.get(of('a'), 'e9')).toBeDefined();
    expect(await store.get(of('a'), 'e5')).toBeUndefined();
  });

  it('evicts the oldest writes past maxEntries and maxBytes', async () => {
    const store = new MemoryCacheEntryStore({ clock: () => 0, maxEntries: 2, maxBytes: 1_000_000 });
    for (const id of ['a', 'b', 'c']) await store.put(entry({ id, expiresAt: 100 }));
    expect(await store.get(P, 'a')).toBeUndefined();
    expect(await store.get(P, 'c')).toBeDefined();
    const small = new MemoryCacheEntryStore({ clock: () => 0, maxBytes: 3000 });
    for (const id of ['a', 'b', 'c']) await small.put(entry({ id, expiresAt: 100 }));
    const stats = await small.stats();
    expect(stats.memoryBytes).toBeLessThanOrEqual(3000);
    expect(await small.get(P, 'c')).toBeDefined();
  });
});

describe('cache entries (redis) stats and flush touch only the tenant’s own keys', () => {
  it('reads and deletes by the tenant’s index, whatever else Redis holds', async () => {
    const backend = entryBackends.find((b) => b.name === 'redis');
    const clock = fakeClock(Date.parse('2025-03-14T12:00:00Z'));
    const fixture = await backend!.create(clock.now);
    const raw = fixture.raw!;
    try {
      await fixture.store.put(entry({ id: 'a1' }));
      await fixture.store.put(entry({ id: 'a2' }), 'digest-of-a2-0123456789');
      // Another tenant's entries, written behind the store's back: not indexed, never read.
      const other = raw.pipeline();
      for (let i = 0; i < 2000; i++)
        other.set(`${fixture.prefix}:{globex}:cache:openai/shape:x${i}`, '{}', 'PX', 60_000);
      await other.exec();
      // What Redis would be asked: read through a proxy of the client, counting every call.
      const called: string[] = [];
      const original = raw.sendCommand.bind(raw);
      raw.sendCommand = ((command: { name: string }, ...rest: unknown[]) => {
        called.push(command.name);
        return (original as (...a: unknown[]) => unknown)(command, ...rest);
      }) as typeof raw.sendCommand;
      expect(await fixture.store.stats('acme')).toMatchObject({ entries: 2 });
      expect(called).toEqual(['evalsha']);
      called.length = 0;
      expect(await fixture.store.flush('acme')).toBe(2);
      expect(called).not.toContain('scan');
      expect(called.length).toBeLessThanOrEqual(4);
      raw.sendCommand = original;
      expect(await raw.keys(`${fixture.prefix}:{acme}:*`)).toEqual([]);
      expect(await raw.keys(`${fixture.prefix}:{globex}:*`)).toHaveLength(2000);
    } finally {
      await fixture.close();
    }
  });
});

describe('cache entries (redis) bookkeeping never outlives the entries', () => {
  it('gives every bookkeeping key a TTL, also one Redis deleted when it emptied', async () => {
    const backend = entryBackends.find((b) => b.name === 'redis');
    const clock = fakeClock(Date.parse('2025-03-14T12:00:00Z'));
    const fixture = await backend!.create(clock.now);
    const raw = fixture.raw!;
    try {
      await fixture.store.put(entry({ id: 'a1' }), 'digest-of-a1-0123456789');
      // The sizes hash empties (Redis deletes it) while the index still holds the digest.
      await fixture.store.delete(P, 'a1');
      await fixture.store.put(entry({ id: 'a2' }));
      const keys = (await raw.keys(`${fixture.prefix}:{acme}:*`)).sort();
      expect(keys.filter((k) => /:cache-(index|sizes|totals)$/.test(k))).toHaveLength(3);
      for (const k of keys) expect(await raw.pttl(k)).toBeGreaterThan(3_000_000);
      expect((await fixture.store.stats('acme')).entries).toBe(1);
    } finally {
      await fixture.close();
    }
  });
});

describe('cache entries (redis) the tenants set', () => {
  it('names the tenant again on its next put once its name was lost', async () => {
    const backend = entryBackends.find((b) => b.name === 'redis');
    const clock = fakeClock(Date.parse('2025-03-14T12:00:00Z'));
    const fixture = await backend!.create(clock.now);
    const raw = fixture.raw!;
    try {
      await fixture.store.put(entry({ id: 'a1' }));
      // As if the SADD after the tenant's first entry had failed, or its pod died before it.
      expect(await raw.srem(`${fixture.prefix}:cache-tenants`, 'acme')).toBe(1);
      expect((await fixture.store.stats()).entries).toBe(0);
      await fixture.store.put(entry({ id: 'a2' }));
      expect((await fixture.store.stats()).entries).toBe(2);
      expect(await fixture.store.flush()).toBe(2);
    } finally {
      await fixture.close();
    }
  });
});
