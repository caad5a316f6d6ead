/** Owned objects, run against the in-process and the Redis store. */
import { afterEach, describe, expect, it } from 'vitest';
import { backends, type StoreFixture } from '../testing/backends.ts';
import { withSizeHead } from '../size-head.ts';
import { MemoryOwnedStore } from './memory.ts';

const owner = { tenant: 'acme', keyId: 'ns/a' };

describe.each(backends)('owned store ($name)', (backend) => {
  let fixture: StoreFixture | undefined;
  afterEach(async () => {
    await fixture?.close();
    fixture = undefined;
  });

  it('round-trips an object for its owner only, per namespace', async () => {
    fixture = await backend.create({});
    const stores = await fixture.open();
    const things = stores.owned<{ n: number }>('things');
    expect(stores.owned('things')).toBe(things);
    await things.put(owner, 'x1', { n: 1 });
    expect(await things.get(owner, 'x1')).toEqual({ n: 1 });
    expect(await stores.owned('others').get(owner, 'x1')).toBeUndefined();
    for (const other of [
      { tenant: 'acme', keyId: 'ns/b' },
      { tenant: 'globex', keyId: 'ns/a' },
    ]) {
      expect(await things.get(other, 'x1')).toBeUndefined();
      expect(await things.delete(other, 'x1')).toBe(false);
    }
    expect(await things.delete(owner, 'x1')).toBe(true);
    expect(await things.get(owner, 'x1')).toBeUndefined();
  });

  it('creates an object once when two writers race to create it', async () => {
    fixture = await backend.create({});
    const one = await fixture.open();
    // In process, one Stores object is the whole store; in Redis, another client is another pod.
    const two = backend.name === 'memory' ? one : await fixture.open();
    const [x, y] = [one.owned<{ v: number }>('ns'), two.owned<{ v: number }>('ns')];
    const created = await Promise.all([
      x.putIfAbsent(owner, 'id', { v: 1 }),
      y.putIfAbsent(owner, 'id', { v: 2 }),
    ]);
    expect(created.filter(Boolean)).toHaveLength(1);
    expect(await x.get(owner, 'id')).toEqual({ v: created[0] ? 1 : 2 });
    expect(await y.putIfAbsent(owner, 'id', { v: 3 })).toBe(false);
    await x.delete(owner, 'id');
    expect(await y.putIfAbsent(owner, 'id', { v: 4 })).toBe(true);
  });

  it('keeps ids that look like key separators apart', async () => {
    fixture = await backend.create({});
    const things = (await fixture.open()).owned<number>('things');
    await things.put({ tenant: 'a', keyId: 'b:c' }, 'd', 1);
    expect(await things.get({ tenant: 'a', keyId: 'b' }, 'c:d')).toBeUndefined();
  });

  it('reads only the recorded size of an object whose conversation is past the size asked for', async () => {
    fixture = await backend.create({});
    const things = (await fixture.open()).owned<{
      conversationBytes?: number;
      n: number;
      conversation: string[];
    }>('sized');
    const conversation = ['é'.repeat(100)];
    const bytes = Buffer.byteLength(JSON.stringify(conversation));
    await things.putJson(owner, 'big', withSizeHead({ n: 1 }, conversation));
    expect(await things.getWithin(owner, 'big', bytes - 1)).toEqual({
      oversized: true,
      conversationBytes: bytes,
    });
    expect(await things.getWithin(owner, 'big', bytes)).toEqual({
      conversationBytes: bytes,
      n: 1,
      conversation,
    });
    expect(await things.getWithin(owner, 'big', Infinity)).toMatchObject({ n: 1 });
    expect(await things.get(owner, 'big')).toMatchObject({ n: 1, conversation });
    // Another owner, an unknown id: nothing. An object stored without a head is read whole.
    expect(await things.getWithin({ tenant: 'acme', keyId: 'ns/b' }, 'big', 0)).toBeUndefined();
    expect(await things.getWithin(owner, 'nothing', 0)).toBeUndefined();
    await things.put(owner, 'plain', { n: 2, conversation });
    expect(await things.getWithin(owner, 'plain', 0)).toEqual({ n: 2, conversation });
  });

  if (backend.name === 'redis')
    it('is shared between pods', async () => {
      fixture = await backend.create({});
      const [a, b] = [await fixture.open(), await fixture.open()];
      await a.owned<number>('things').put(owner, 'shared', 7);
      expect(await b.owned<number>('things').get(owner, 'shared')).toBe(7);
    });
});

describe('MemoryOwnedStore bounds', () => {
  it('forgets the oldest past the count and size bounds, and expired ones', async () => {
    let now = 0;
    const store = new MemoryOwnedStore<string>({ maxEntries: 2, maxChars: 29, ttlMs: 100, clock: () => now });
    await store.put(owner, 'a', 'x');
    await store.put(owner, 'b', 'x');
    await store.put(owner, 'c', 'x');
    expect(await store.get(owner, 'a')).toBeUndefined();
    await store.put(owner, 'd', 'y'.repeat(25));
    expect(await store.get(owner, 'b')).toBeUndefined();
    expect(await store.get(owner, 'c')).toBeUndefined();
    now = 100;
    expect(await store.get(owner, 'd')).toBeUndefined();
  });

  it('makes a flooding tenant evict its own oldest objects, not another tenant’s', async () => {
    const store = new MemoryOwnedStore<string>({ maxEntries: 10, maxChars: 1000 });
    const victim = { tenant: 'victim', keyId: 'ns/v' };
    const attacker = { tenant: 'attacker', keyId: 'ns/a' };
    for (const id of ['t1', 't2', 't3']) await store.put(victim, id, 'task');
    for (let i = 0; i < 100; i++) await store.put(attacker, `flood-${i}`, 'x'.repeat(20));
    for (const id of ['t1', 't2', 't3']) expect(await store.get(victim, id)).toBe('task');
    // The attacker keeps its newest, within what the store holds.
    expect(await store.get(attacker, 'flood-99')).toBe('x'.repeat(20));
    expect(await store.get(attacker, 'flood-0')).toBeUndefined();
  });

  it('holds each tenant to its own share when one is set', async () => {
    const store = new MemoryOwnedStore<string>({ maxEntries: 10, maxChars: 1000, maxEntriesPerTenant: 2 });
    const t = { tenant: 't', keyId: 'ns/k' };
    for (const id of ['a', 'b', 'c']) await store.put(t, id, 'v');
    expect(await store.get(t, 'a')).toBeUndefined();
    expect(await store.get(t, 'c')).toBe('v');
  });
});
