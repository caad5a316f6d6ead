/**
 * The in-process CCR store's memory bound. SPEC.md bounds entries per scope (32) and live
 * scopes (512) but not their size: each entry is a verbatim tool output or file of any length
 * up to a request body, so 512 × 32 entries could hold many gigabytes in one pod. The store
 * also keeps a total of content characters, evicting least recently used scopes first.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_CCR_MAX_CHARS, MemoryCcrStore } from './memory.ts';
import type { CcrEntry } from './types.ts';

/** An entry of `chars` characters in all: label, keyword and content. */
const entry = (id: string, chars: number): Omit<CcrEntry, 'mentionedTurn'> => {
  const label = `read_file {"path":"src/${id}.ts"}`;
  return {
    id,
    label,
    keywords: [id],
    content: id.padEnd(chars - label.length - id.length, '.'),
    storedAt: 0,
  };
};

const recallAll = async (store: MemoryCcrStore, partition: string, ids: string[]) =>
  (await store.recall(partition, ids, [], 1)).map((e) => e.id);

describe('in-process CCR store: total size', () => {
  it('evicts the least recently used scopes first once the content passes the bound', async () => {
    const store = new MemoryCcrStore({ clock: () => 0, maxChars: 1000 });
    await store.file('a', [entry('a1', 300), entry('a2', 300)]);
    await store.file('b', [entry('b1', 300)]);
    expect(store.chars).toBe(900);
    await store.file('c', [entry('c1', 300)]);
    // a was used least recently: all of it goes, b and c stay whole.
    expect(await recallAll(store, 'a', ['a1', 'a2'])).toEqual([]);
    expect(await recallAll(store, 'b', ['b1'])).toEqual(['b1']);
    expect(await recallAll(store, 'c', ['c1'])).toEqual(['c1']);
    expect(store.chars).toBe(600);
  });

  it("a single scope past the bound loses its own oldest entries, never another's newer scope", async () => {
    const store = new MemoryCcrStore({ clock: () => 0, maxChars: 1000 });
    await store.file(
      'big',
      ['x1', 'x2', 'x3', 'x4', 'x5'].map((id) => entry(id, 300)),
    );
    expect(await recallAll(store, 'big', ['x1', 'x2', 'x3', 'x4', 'x5'])).toEqual(['x3', 'x4', 'x5']);
    expect(store.chars).toBe(900);
    // One entry larger than the whole bound is not kept at all, and pushes nothing out.
    await store.file('huge', [entry('h1', 1001)]);
    expect(await recallAll(store, 'huge', ['h1'])).toEqual([]);
    expect(await recallAll(store, 'big', ['x3', 'x4', 'x5'])).toEqual(['x3', 'x4', 'x5']);
    expect(store.chars).toBe(900);
  });

  it('counts an entry filed again once, and forgets the size of what expired', async () => {
    let now = 0;
    const store = new MemoryCcrStore({ clock: () => now, maxChars: 1000 });
    await store.file('a', [entry('a1', 300)]);
    await store.file('a', [entry('a1', 300)]);
    expect(store.chars).toBe(300);
    now = 31 * 60_000;
    await store.openTurn('a');
    expect(store.chars).toBe(0);
  });

  it('counts labels and keywords too: they are kept as long as the content', async () => {
    const store = new MemoryCcrStore({ clock: () => 0, maxChars: 1000 });
    const wordy = {
      id: 'w',
      label: 'L'.repeat(300),
      keywords: ['k'.repeat(200), 'j'.repeat(200)],
      content: 'c'.repeat(100),
      storedAt: 0,
    };
    await store.file('a', [wordy]);
    expect(store.chars).toBe(800);
    await store.file('b', [{ ...wordy, id: 'w2' }]);
    expect(await recallAll(store, 'a', ['w'])).toEqual([]);
    expect(store.chars).toBe(800);
  });

  it('defaults to 128 Mi characters', () => {
    expect(DEFAULT_CCR_MAX_CHARS).toBe(128 * 1024 * 1024);
  });
});
