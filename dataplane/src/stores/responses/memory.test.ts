import { describe, expect, it } from 'vitest';
import type { ResponseObject } from '../../formats/responses/types.ts';
import { MemoryResponseStore } from './memory.ts';
import { encodeRecord } from './record.ts';

const owner = { tenant: 'acme', keyHash: 'aa' };
const entry = (id: string) => ({
  response: { id, object: 'response' } as unknown as ResponseObject,
  conversation: [{ role: 'user' as const, content: id }],
});

describe('MemoryResponseStore', () => {
  it('keeps entries per owner: another tenant or key finds nothing and deletes nothing', async () => {
    const store = new MemoryResponseStore();
    await store.put(owner, entry('resp_1'));
    expect(await store.get({ tenant: 'other', keyHash: 'aa' }, 'resp_1')).toBeUndefined();
    expect(await store.get({ tenant: 'acme', keyHash: 'bb' }, 'resp_1')).toBeUndefined();
    expect(await store.delete({ tenant: 'acme', keyHash: 'bb' }, 'resp_1')).toBe(false);
    expect((await store.get(owner, 'resp_1'))?.conversation[0]?.content).toBe('resp_1');
    expect(await store.delete(owner, 'resp_1')).toBe(true);
    expect(await store.get(owner, 'resp_1')).toBeUndefined();
  });

  it('evicts the oldest beyond its bound and forgets entries after the TTL', async () => {
    let now = 0;
    const store = new MemoryResponseStore({ maxEntries: 2, ttlMs: 1000, clock: () => now });
    for (const id of ['a', 'b', 'c']) await store.put(owner, entry(id));
    expect(await store.get(owner, 'a')).toBeUndefined();
    expect(await store.get(owner, 'c')).toBeDefined();
    now = 1000;
    expect(await store.get(owner, 'b')).toBeUndefined();
    expect(await store.delete(owner, 'c')).toBe(false);
  });

  it('bounds the total size: long conversations push the oldest out', async () => {
    // As stored: the record, its conversation's size first.
    const size = encodeRecord(entry('a')).length;
    const store = new MemoryResponseStore({ maxChars: 2 * size + 1 });
    for (const id of ['a', 'b', 'c']) await store.put(owner, entry(id));
    expect(await store.get(owner, 'a')).toBeUndefined();
    expect(await store.get(owner, 'b')).toBeDefined();
    expect(await store.get(owner, 'c')).toBeDefined();
    // Replacing an entry does not count it twice.
    await store.put(owner, entry('c'));
    expect(await store.get(owner, 'b')).toBeDefined();
  });

  it("one tenant's flood evicts its own oldest responses, never another tenant's", async () => {
    const store = new MemoryResponseStore({ maxEntries: 4 });
    const victim = { tenant: 'globex', keyHash: 'b'.repeat(64) };
    await store.put(victim, entry('kept'));
    for (let i = 0; i < 20; i++) await store.put(owner, entry(`flood-${i}`));
    expect(await store.get(victim, 'kept')).toBeDefined();
    expect(await store.get(owner, 'flood-19')).toBeDefined();
    expect(await store.get(owner, 'flood-0')).toBeUndefined();
  });

  it('hands out copies: mutating what get returned changes nothing stored', async () => {
    const store = new MemoryResponseStore();
    await store.put(owner, entry('x'));
    (await store.get(owner, 'x'))!.conversation.push({ role: 'user', content: 'more' });
    expect((await store.get(owner, 'x'))!.conversation).toHaveLength(1);
  });
});
