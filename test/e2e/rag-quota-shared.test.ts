/**
 * The per-tenant chunk quota of shared RAG indexes (two pods, one Redis, one Milvus Lite),
 * attacked over HTTP: a tenant at its quota is refused with a 429 before anything is
 * embedded while other tenants ingest; pods racing for the last room admit exactly the
 * quota; a failed embedding hands its room back; deleting an index frees its chunks.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../../dataplane/src/gateway.ts';
import { testMilvusAddress } from '../harness/milvus.ts';
import { testRedisUrl } from '../harness/redis.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const QUOTA = 12;
const env = {
  FAKE_PROVIDER_KEY: 'sk-fake',
  GANTRY_RAG_MAX_CHUNKS_PER_TENANT: String(QUOTA),
  GANTRY_RAG_MAX_CHUNKS_TOTAL: '500',
};
const shared = {
  redisUrl: testRedisUrl(),
  redisPrefix: `rag-quota-${randomUUID()}`,
  milvusAddress: testMilvusAddress(),
};
const KEYS = {
  acme: 'sk-q-acme',
  acme2: 'sk-q-acme-2',
  globex: 'sk-q-globex',
  initech: 'sk-q-initech',
  umbrella: 'sk-q-umbrella',
  hooli: 'sk-q-hooli',
  hooli2: 'sk-q-hooli-2',
};
let podA: Stack;
let podB: Gateway;

beforeAll(async () => {
  podA = await startStack(
    ([url]) =>
      [
        deployment({
          name: 'embedder',
          model: 'embed-test',
          baseUrl: fakeBase(url!),
          capabilities: ['embeddings'],
          pricing: { inputPerMillionTokens: 10, outputPerMillionTokens: 0 },
        }),
        ...['acme', 'globex', 'initech', 'umbrella', 'hooli'].map((t) => tenant(t)),
        apiKey('q-acme', KEYS.acme, 'acme'),
        apiKey('q-acme-2', KEYS.acme2, 'acme'),
        apiKey('q-globex', KEYS.globex, 'globex'),
        apiKey('q-initech', KEYS.initech, 'initech'),
        apiKey('q-umbrella', KEYS.umbrella, 'umbrella'),
        apiKey('q-hooli', KEYS.hooli, 'hooli'),
        apiKey('q-hooli-2', KEYS.hooli2, 'hooli'),
      ].join(''),
    { ...shared, env },
  );
  podB = await startGateway({
    configFile: podA.configFile,
    env,
    watch: false,
    drainTimeoutMs: 200,
    ...shared,
  });
}, 60_000);
afterAll(async () => {
  await podB?.close();
  await podA?.close();
});

const a = () => podA.gateway.url;
const b = () => podB.url;
const fake = () => podA.fakes[0]!;
const embedCalls = () => fake().requests.filter((r) => r.path === '/v1/embeddings').length;

interface Json {
  [k: string]: unknown;
  error?: { message: string; type: string; code?: string };
}

/** A document of `chunks` paragraphs, each one chunk at chunk_size 200. */
const doc = (chunks: number, tag: string) =>
  Array.from(
    { length: chunks },
    (_, i) =>
      `Paragraph ${i} of ${tag}: the quarterly report lists revenue, costs and the headcount per office.`,
  ).join('\n\n');

async function ingest(pod: string, key: string, index: string, chunks: number) {
  const res = await fetch(`${pod}/v1/rag/ingest`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      embedding_model: 'embed-test',
      index,
      text: doc(chunks, `${index}-${randomUUID()}`),
      chunking: { chunk_size: 200, chunk_overlap: 0 },
    }),
  });
  return { status: res.status, cost: res.headers.get('x-gantry-cost'), json: (await res.json()) as Json };
}

async function call(method: 'GET' | 'DELETE', pod: string, key: string, path: string) {
  const res = await fetch(`${pod}/v1${path}`, { method, headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, json: (await res.json()) as Json };
}

describe('shared RAG chunk quota across pods', () => {
  it('refuses a tenant at its quota with a 429 before embedding, while another tenant ingests', async () => {
    expect((await ingest(a(), KEYS.acme, 'kb', 8)).json).toMatchObject({ chunks: 8, index_chunks: 8 });
    // Another key of the tenant, another index, the other pod: the same quota.
    expect((await ingest(b(), KEYS.acme2, 'notes', 4)).status).toBe(200);
    const before = embedCalls();
    const refused = await ingest(b(), KEYS.acme, 'fresh', 1);
    expect(refused.status).toBe(429);
    expect(refused.json.error).toMatchObject({ type: 'insufficient_quota' });
    expect(refused.json.error!.message).toContain(`hold ${QUOTA} chunks`);
    expect(refused.json.error!.message).toContain(`tenant quota of ${QUOTA} chunks`);
    // Nothing embedded, nothing charged.
    expect(embedCalls()).toBe(before);
    expect(refused.cost).toBeNull();
    expect((await ingest(a(), KEYS.globex, 'kb', 4)).status).toBe(200);
    expect(embedCalls()).toBe(before + 1);
  });

  it('admits exactly the quota when both pods race for the last room', async () => {
    const before = embedCalls();
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, n) => ingest(n % 2 ? b() : a(), KEYS.initech, `race${n}`, 3)),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(QUOTA / 3);
    expect(statuses.filter((s) => s === 429)).toHaveLength(10 - QUOTA / 3);
    expect(embedCalls()).toBe(before + QUOTA / 3);
    const held = await Promise.all(
      results.map(
        async (_, n) => (await call('GET', a(), KEYS.initech, `/rag/indexes/race${n}`)).json.chunks ?? 0,
      ),
    );
    expect(held.reduce((s: number, c) => s + Number(c), 0)).toBe(QUOTA);
    expect(await podB.stores.ragQuota.usage('initech')).toMatchObject({ tenant: QUOTA });
  });

  it('hands the room back when the embedding fails', async () => {
    fake().setFaults([{ match: { path: '/v1/embeddings' }, fault: { type: 'status', status: 400 } }]);
    try {
      const failed = await ingest(a(), KEYS.umbrella, 'kb', QUOTA);
      expect(failed.status).toBe(400);
    } finally {
      fake().setFaults([]);
    }
    expect(await podA.gateway.stores.ragQuota.usage('umbrella')).toMatchObject({ tenant: 0 });
    expect(await call('GET', b(), KEYS.umbrella, '/rag/indexes/kb')).toMatchObject({ status: 404 });
    expect((await ingest(b(), KEYS.umbrella, 'kb', QUOTA)).status).toBe(200);
  });

  it('frees the chunks of a deleted index, for its owner only', async () => {
    expect((await ingest(a(), KEYS.hooli, 'kb', 5)).status).toBe(200);
    expect((await ingest(b(), KEYS.hooli, 'kb', 7)).status).toBe(200);
    expect((await ingest(a(), KEYS.hooli, 'more', 1)).status).toBe(429);
    // Another key of the same tenant has no index of that name.
    expect((await call('DELETE', b(), KEYS.hooli2, '/rag/indexes/kb')).status).toBe(404);
    const deleted = await call('DELETE', b(), KEYS.hooli, '/rag/indexes/kb');
    expect(deleted).toMatchObject({
      status: 200,
      json: { object: 'rag.index.deleted', index: 'kb', deleted: true },
    });
    expect((await call('GET', a(), KEYS.hooli, '/rag/indexes/kb')).status).toBe(404);
    expect((await call('DELETE', a(), KEYS.hooli, '/rag/indexes/kb')).status).toBe(404);
    expect(await podA.gateway.stores.ragQuota.usage('hooli')).toMatchObject({ tenant: 0 });
    expect((await ingest(a(), KEYS.hooli, 'more', QUOTA)).status).toBe(200);
  });
});
