/** One behavioural suite for the CCR store, run against the in-process store and a real Redis. */
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { testRedisUrl } from '../../../../../test/harness/redis.ts';
import { newId } from '../../../stores/ids.ts';
import { waitForReady } from '../../../stores/redis/client.ts';
import { fakeClock, type FakeClock } from '../../../stores/testing/backends.ts';
import type { Clock } from '../../../stores/types.ts';
import { partitionKey } from '../session.ts';
import { CCR_ENTRY_LIFETIME_MS, CCR_FILES_PER_SCOPE, CCR_LIVE_SCOPES } from './limits.ts';
import { MemoryCcrStore } from './memory.ts';
import { RedisCcrStore } from './redis.ts';
import type { CcrEntry, CcrStore } from './types.ts';

interface Fixture {
  store: CcrStore;
  /** Another handle on the same data (another pod, for Redis). */
  other(): CcrStore;
  close(): Promise<void>;
}

const backends: { name: string; create(clock: Clock, maxScopes?: number): Promise<Fixture> }[] = [
  {
    name: 'memory',
    create: async (clock, maxScopes) => {
      const store = new MemoryCcrStore({ clock, maxScopes });
      return { store, other: () => store, close: () => store.close() };
    },
  },
  {
    name: 'redis',
    create: async (clock, maxScopes) => {
      const prefix = `test-${newId()}`;
      const clients: Redis[] = [];
      const open = () => {
        const raw = new Redis(testRedisUrl());
        clients.push(raw);
        return new RedisCcrStore(raw, { prefix, clock, maxScopes });
      };
      const store = open();
      await waitForReady(clients[0]!);
      return {
        store,
        other: open,
        close: async () => {
          for (const c of clients) c.disconnect();
        },
      };
    },
  },
];

const P = (team: string, key: string, session: string) =>
  partitionKey({ teamId: team, keyHash: key, sessionId: session });
const A = P('acme', 'k1', 'sess');

const item = (id: string, content: string, storedAt: number): Omit<CcrEntry, 'mentionedTurn'> => ({
  id,
  label: `read_file {"path":"src/${id}.ts"}`,
  keywords: ['alpha', id],
  content,
  storedAt,
});

describe.each(backends)('CCR store ($name)', (backend) => {
  let fixture: Fixture | undefined;
  let clock: FakeClock;
  const open = async (maxScopes?: number) => {
    clock = fakeClock();
    fixture = await backend.create(clock.now, maxScopes);
    return fixture;
  };
  afterEach(async () => {
    await fixture?.close();
    fixture = undefined;
  });

  it('counts turns per scope and returns what was filed, byte-exact', async () => {
    const { store, other } = await open();
    const content = 'line 1\r\n\ttab\u0000nul 🚀 "quoted" \\ back\n'.repeat(50);
    expect((await store.openTurn(A)).turn).toBe(1);
    await store.file(A, [item('f1', content, clock.now())]);
    const t2 = await other().openTurn(A);
    expect(t2.turn).toBe(2);
    const { content: _c, ...index } = item('f1', content, clock.now());
    expect(t2.entries).toEqual([{ ...index, mentionedTurn: undefined }]);
    const got = await other().recall(A, ['f1'], [], 2);
    expect(got).toHaveLength(1);
    expect(got[0]!.content).toBe(content);
    expect(Buffer.from(got[0]!.content).equals(Buffer.from(content))).toBe(true);
  });

  it('records mentions only for the ids named, and keeps them when an entry is filed again', async () => {
    const { store } = await open();
    await store.openTurn(A);
    await store.file(A, [item('f1', 'one', clock.now()), item('f2', 'two', clock.now())]);
    await store.recall(A, ['f1', 'f2'], ['f1'], 1);
    await store.file(A, [item('f1', 'one', clock.now())]);
    const t = await store.openTurn(A);
    expect(Object.fromEntries(t.entries.map((e) => [e.id, e.mentionedTurn]))).toEqual({
      f1: 1,
      f2: undefined,
    });
  });

  it('isolation: two keys and two tenants using the same session name never see each other', async () => {
    const { store } = await open();
    const scopes = [P('acme', 'k1', 'shared'), P('acme', 'k2', 'shared'), P('globex', 'k1', 'shared')];
    for (const [i, s] of scopes.entries()) {
      await store.openTurn(s);
      await store.file(s, [item(`only-${i}`, `secret of ${i}`, clock.now())]);
    }
    for (const [i, s] of scopes.entries()) {
      const t = await store.openTurn(s);
      expect(t.entries.map((e) => e.id)).toEqual([`only-${i}`]);
      for (const j of [0, 1, 2].filter((j) => j !== i))
        expect(await store.recall(s, [`only-${j}`], [], 2)).toEqual([]);
    }
  });

  it(`keeps at most ${CCR_FILES_PER_SCOPE} entries per scope, oldest evicted first`, async () => {
    const { store } = await open();
    await store.openTurn(A);
    for (let i = 0; i < CCR_FILES_PER_SCOPE + 3; i++) {
      await store.file(A, [item(`f${i}`, `content ${i}`, clock.now())]);
      clock.advance(1);
    }
    const t = await store.openTurn(A);
    expect(t.entries.map((e) => e.id)).toEqual(
      Array.from({ length: CCR_FILES_PER_SCOPE }, (_, i) => `f${i + 3}`),
    );
    // Filing an entry again makes it the newest.
    await store.file(A, [item('f3', 'content 3', clock.now()), item('new', 'n', clock.now())]);
    const u = await store.openTurn(A);
    expect(u.entries.map((e) => e.id).slice(-2)).toEqual(['f3', 'new']);
    expect(u.entries.map((e) => e.id)).not.toContain('f4');
  });

  it('entries live 30 minutes from when they were filed', async () => {
    const { store } = await open();
    await store.openTurn(A);
    await store.file(A, [item('old', 'x', clock.now())]);
    clock.advance(CCR_ENTRY_LIFETIME_MS / 2);
    await store.file(A, [item('young', 'y', clock.now())]);
    clock.advance(CCR_ENTRY_LIFETIME_MS / 2 - 1);
    expect((await store.openTurn(A)).entries.map((e) => e.id)).toEqual(['old', 'young']);
    clock.advance(1);
    expect((await store.openTurn(A)).entries.map((e) => e.id)).toEqual(['young']);
    expect(await store.recall(A, ['old'], [], 9)).toEqual([]);
  });

  it(`keeps at most ${CCR_LIVE_SCOPES} live scopes, least recently used evicted`, async () => {
    const max = 4; // the same code path as 512, quicker to fill
    const { store } = await open(max);
    const scopes = Array.from({ length: max + 1 }, (_, i) => P('acme', 'k', `s${i}`));
    for (const s of scopes.slice(0, max)) {
      await store.openTurn(s);
      await store.file(s, [item('f', 'x', clock.now())]);
      clock.advance(1);
    }
    await store.openTurn(scopes[0]!); // s0 used again: s1 is now the least recent
    clock.advance(1);
    await store.openTurn(scopes[max]!);
    expect((await store.openTurn(scopes[1]!)).entries).toEqual([]);
    expect((await store.openTurn(scopes[0]!)).entries.map((e) => e.id)).toEqual(['f']);
  });

  it("the default bound is SPEC.md's 512", async () => {
    const { store } = await open();
    const scopes = Array.from({ length: CCR_LIVE_SCOPES + 1 }, (_, i) => P('t', 'k', `s${i}`));
    for (const s of scopes) {
      await store.file(s, [item('f', 'x', clock.now())]);
      clock.advance(1);
    }
    // Checked newest-evicted-last: opening the evicted s0 again makes it live and pushes s1 out.
    expect((await store.openTurn(scopes[1]!)).entries.map((e) => e.id)).toEqual(['f']);
    expect((await store.openTurn(scopes[0]!)).entries).toEqual([]);
  });
});

describe('CCR in Redis: key layout', () => {
  it('keys name only the SHA-256 partition (hash-tagged), never a tenant, key or session name', async () => {
    const prefix = `test-${newId()}`;
    const raw = new Redis(testRedisUrl());
    await waitForReady(raw);
    try {
      const store = new RedisCcrStore(raw, { prefix });
      const partition = P('acme-tenant', 'keyhash-zz', 'my-session-name');
      await store.openTurn(partition);
      await store.file(partition, [item('f', 'content', Date.now())]);
      const keys = await raw.keys(`${prefix}:*`);
      expect(keys.length).toBeGreaterThan(0);
      for (const k of keys) {
        expect(k).toMatch(new RegExp(`^${prefix}:ccr:(\\{[0-9a-f]{64}\\}:[a-z]+|lru)$`));
        expect(k).not.toMatch(/acme|my-session|keyhash/);
      }
      await expect(store.openTurn('not-a-partition')).rejects.toThrow(/hex SHA-256/);
    } finally {
      raw.disconnect();
    }
  });
});
