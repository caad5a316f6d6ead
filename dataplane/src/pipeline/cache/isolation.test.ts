/**
 * Nothing hits across tenants, formats or answer shapes — tried end to end through the real
 * key, embedder and stores: in process (vector index + entries) and shared (Milvus Lite +
 * Redis). An identical request under another scope must find nothing at all.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ChatCompletion, ChatRequest } from '../../formats/openai/types.ts';
import { entryBackends, type EntryFixture } from '../../stores/cache-entries/testing.ts';
import { vectorBackends } from '../../stores/vectors/testing.ts';
import type { VectorIndex } from '../../stores/vectors/types.ts';
import { createBuiltinEmbedder } from './builtin-embedder.ts';
import { embedForCache } from './embedder.ts';
import { buildCacheEntry } from './entry.ts';
import { cacheKeyParts, type CacheScope } from './key.ts';
import type { CacheFormat } from './policy.ts';
import { chooseBand, entryVector, probeVector } from './score.ts';

const embedder = createBuiltinEmbedder();
const thresholds = { direct: 0.95, reuse: 0.9, tweak: 0.85 };
const request: ChatRequest = {
  model: 'gpt-4o-mini',
  messages: [
    { role: 'system', content: 'You are a helpful assistant.' },
    { role: 'user', content: 'What is the capital of France?' },
  ],
};
const answer: ChatCompletion = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 0,
  model: 'gpt-4o-mini',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Paris.' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 20, completion_tokens: 2, total_tokens: 22 },
};

const combos = [
  { name: 'in process', vectors: vectorBackends[0]!, entries: entryBackends[0]! },
  { name: 'Milvus + Redis', vectors: vectorBackends[1]!, entries: entryBackends[1]! },
];

describe.each(combos)('cache isolation ($name)', ({ vectors, entries }) => {
  let index: VectorIndex | undefined;
  let fixture: EntryFixture | undefined;

  afterEach(async () => {
    await index?.close();
    await fixture?.close();
    index = undefined;
    fixture = undefined;
  });

  async function open() {
    index = await vectors.create(Date.now);
    fixture = await entries.create(Date.now);
    const idx = index;
    const store = fixture.store;
    const scope = (tenant: string, format: CacheFormat = 'openai'): CacheScope => ({
      tenant,
      format,
      embedder: embedder.id,
    });

    async function store_(req: ChatRequest, s: CacheScope) {
      const parts = cacheKeyParts(req, s)!;
      const v = await embedForCache(embedder, parts);
      const entry = buildCacheEntry({ parts, req, response: answer, now: Date.now(), ttlSeconds: 600 });
      await store.put(entry);
      await idx.upsert(parts.partition, entry.id, entryVector(v.query, v.context), entry.expiresAt);
      return entry;
    }

    /** What a lookup finds: the best hit with a band above MISS and its stored entry. */
    async function lookup(req: ChatRequest, s: CacheScope) {
      const parts = cacheKeyParts(req, s)!;
      const v = await embedForCache(embedder, parts);
      const hits = await idx.search(parts.partition, probeVector(v.query, v.context, 0.7, 0.3), 5);
      const best = hits[0];
      if (!best || chooseBand(best.score, thresholds) === 'MISS') return undefined;
      return { score: best.score, entry: await store.get(parts.partition, best.id) };
    }
    return { scope, store: store_, lookup, entryStore: store };
  }

  it('serves the same tenant, format and shape (the isolation tests below could hit)', async () => {
    const c = await open();
    const stored = await c.store(request, c.scope('tenant-a'));
    const hit = await c.lookup({ ...request, stream: true, user: 'someone' }, c.scope('tenant-a'));
    expect(hit?.score).toBeCloseTo(1, 4);
    expect(hit?.entry?.id).toBe(stored.id);
  });

  it("never returns tenant A's entry to tenant B", async () => {
    const c = await open();
    const stored = await c.store(request, c.scope('tenant-a'));
    expect(await c.lookup(request, c.scope('tenant-b'))).toBeUndefined();
    // Not even by guessing the id in B's partition.
    const bPartition = cacheKeyParts(request, c.scope('tenant-b'))!.partition;
    expect(await c.entryStore.get(bPartition, stored.id)).toBeUndefined();
    // A tenant whose name extends A's, and one that differs only in case.
    expect(await c.lookup(request, c.scope('tenant-a2'))).toBeUndefined();
    expect(await c.lookup(request, c.scope('Tenant-A'))).toBeUndefined();
  });

  it('keeps the OpenAI and Anthropic formats apart', async () => {
    const c = await open();
    await c.store(request, c.scope('tenant-a', 'openai'));
    expect(await c.lookup(request, c.scope('tenant-a', 'anthropic'))).toBeUndefined();
    await c.store(request, c.scope('tenant-a', 'anthropic'));
    expect(await c.lookup(request, c.scope('tenant-a', 'anthropic'))).toBeDefined();
  });

  it('keeps different response formats and models apart', async () => {
    const c = await open();
    await c.store(request, c.scope('tenant-a'));
    expect(
      await c.lookup({ ...request, response_format: { type: 'json_object' } }, c.scope('tenant-a')),
    ).toBeUndefined();
    expect(
      await c.lookup(
        {
          ...request,
          response_format: { type: 'json_schema', json_schema: { name: 'city', schema: { type: 'object' } } },
        },
        c.scope('tenant-a'),
      ),
    ).toBeUndefined();
    expect(await c.lookup({ ...request, model: 'gpt-4o' }, c.scope('tenant-a'))).toBeUndefined();
  });
});
