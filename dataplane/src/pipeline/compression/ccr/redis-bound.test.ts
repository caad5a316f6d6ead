/**
 * The Redis CCR store's size bound. SPEC.md's limits count entries (32 per scope) and scopes
 * (512), but an entry is a verbatim tool output as long as a request body, so those counts
 * alone let context recovery fill a Redis the operator runs at `noeviction` for billing, and
 * then every tenant's admission writes fail. Each scope now holds at most a byte total,
 * enforced inside the filing script, oldest entries out first.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testRedisUrl } from '../../../../../test/harness/redis.ts';
import { newId } from '../../../stores/ids.ts';
import { waitForReady } from '../../../stores/redis/client.ts';
import { partitionKey } from '../session.ts';
import { CCR_LIVE_SCOPES } from './limits.ts';
import { DEFAULT_CCR_SCOPE_BYTES, RedisCcrStore } from './redis.ts';
import type { CcrEntry } from './types.ts';

let raw: Redis;
beforeAll(async () => {
  raw = new Redis(testRedisUrl());
  await waitForReady(raw);
});
afterAll(() => raw.disconnect());

const entry = (id: string, bytes: number, storedAt = Date.now()): Omit<CcrEntry, 'mentionedTurn'> => ({
  id,
  label: `read_file {"path":"src/${id}.ts"}`,
  keywords: [id],
  content: id.padEnd(bytes, '.'),
  storedAt,
});

/** What a scope holds in Redis: its entries' index JSON and content, in bytes. */
async function held(prefix: string, partition: string): Promise<{ ids: string[]; bytes: number }> {
  const key = (part: string) => `${prefix}:ccr:{${partition}}:${part}`;
  const ids = await raw.zrange(key('order'), 0, -1);
  let bytes = 0;
  for (const id of ids) bytes += (await raw.hstrlen(key('idx'), id)) + (await raw.hstrlen(key('data'), id));
  return { ids, bytes };
}

describe('Redis CCR store: bytes per scope', () => {
  const P = partitionKey({ teamId: 'acme', keyHash: 'k1', sessionId: 's' });

  it('keeps a scope under its byte bound, evicting its oldest entries', async () => {
    const prefix = `bound-${newId()}`;
    const store = new RedisCcrStore(raw, { prefix, maxScopeBytes: 10_000 });
    await store.file(P, [entry('a1', 3000), entry('a2', 3000)]);
    await store.file(P, [entry('a3', 3000), entry('a4', 3000), entry('a5', 3000)]);
    const { ids, bytes } = await held(prefix, P);
    expect(ids).toEqual(['a3', 'a4', 'a5']);
    expect(bytes).toBeLessThanOrEqual(10_000);
    expect((await store.recall(P, ['a1', 'a5'], [], 1)).map((e) => e.id)).toEqual(['a5']);
  });

  it('does not file an entry larger than the bound, and it pushes nothing out', async () => {
    const prefix = `bound-${newId()}`;
    const store = new RedisCcrStore(raw, { prefix, maxScopeBytes: 10_000 });
    await store.file(P, [entry('small', 3000)]);
    await store.file(P, [entry('huge', 20_000)]);
    expect((await held(prefix, P)).ids).toEqual(['small']);
  });

  it('forgets the size of entries dropped on expiry, so new ones fit again', async () => {
    const prefix = `bound-${newId()}`;
    let now = 0;
    const store = new RedisCcrStore(raw, { prefix, maxScopeBytes: 10_000, clock: () => now });
    await store.file(P, [entry('old1', 4000, 0), entry('old2', 4000, 0)]);
    now = 31 * 60_000;
    await store.openTurn(P); // drops both as expired
    await store.file(P, [entry('new1', 4000, now), entry('new2', 4000, now)]);
    expect((await held(prefix, P)).ids).toEqual(['new1', 'new2']);
    expect(await raw.hkeys(`${prefix}:ccr:{${P}}:size`)).toEqual(['new1', 'new2']);
  });

  it('by default holds at most 128 MiB in all', () => {
    expect(DEFAULT_CCR_SCOPE_BYTES * CCR_LIVE_SCOPES).toBe(128 * 1024 * 1024);
  });
});
