/**
 * Two gateway pods on one Redis and one Milvus: interactions, A2A task ownership and RAG
 * indexes made through one pod are served by the other, and stay private to their key.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../../dataplane/src/gateway.ts';
import { testMilvusAddress } from '../harness/milvus.ts';
import { testRedisUrl } from '../harness/redis.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEY = 'sk-shared';
const SECOND_KEY = 'sk-shared-2';
const shared = {
  redisUrl: testRedisUrl(),
  redisPrefix: `agents-${randomUUID()}`,
  milvusAddress: testMilvusAddress(),
};
let podA: Stack;
let podB: Gateway;

beforeAll(async () => {
  podA = await startStack(
    ([url]) =>
      [
        deployment({ name: 'chat', model: 'gpt-test', baseUrl: fakeBase(url!) }),
        deployment({
          name: 'embedder',
          model: 'embed-test',
          baseUrl: fakeBase(url!),
          capabilities: ['embeddings'],
        }),
        deployment({
          name: 'agent',
          model: 'helper',
          provider: 'openai-compatible',
          baseUrl: `${url!}/a2a/helper`,
          capabilities: ['a2a'],
        }),
        tenant('acme'),
        apiKey('k1', KEY, 'acme'),
        apiKey('k2', SECOND_KEY, 'acme'),
      ].join(''),
    shared,
  );
  podB = await startGateway({
    configFile: podA.configFile,
    env: { FAKE_PROVIDER_KEY: 'sk-fake' },
    watch: false,
    drainTimeoutMs: 200,
    ...shared,
  });
}, 60_000);
afterAll(async () => {
  await podB?.close();
  await podA?.close();
});

async function post(base: string, path: string, body: unknown, key = KEY) {
  const res = await fetch(`${base}/v1${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}
const a = () => podA.gateway.url;
const b = () => podB.url;

describe('agent routes across pods', () => {
  it('chains an interaction made on pod A from pod B, for its key only', async () => {
    const first = await post(a(), '/interactions', { model: 'gpt-test', input: 'Pod A remembers this' });
    expect(first.status).toBe(200);
    const second = await post(b(), '/interactions', {
      model: 'gpt-test',
      input: 'and?',
      previous_interaction_id: first.json.id,
    });
    expect(second.status).toBe(200);
    expect(JSON.stringify(podA.fakes[0]!.requests.at(-1)!.body)).toContain('Pod A remembers this');
    const other = await post(
      b(),
      '/interactions',
      { model: 'gpt-test', input: 'x', previous_interaction_id: first.json.id },
      SECOND_KEY,
    );
    expect(other.status).toBe(404);
  });

  it('lets the owner continue an A2A task on the other pod, and no other key', async () => {
    const call = (taskId?: string, id = 1) => ({
      jsonrpc: '2.0',
      id,
      method: 'message/send',
      params: {
        message: {
          role: 'user',
          messageId: `m${id}`,
          parts: [{ kind: 'text', text: 'hello' }],
          ...(taskId && { taskId }),
        },
      },
    });
    const made = await post(a(), '/a2a/helper/message/send', call());
    const taskId = (made.json.result as { id: string }).id;
    const mine = await post(b(), '/a2a/helper/message/send', call(taskId, 2));
    expect((mine.json.result as { id: string }).id).toBe(taskId);
    const theirs = await post(b(), '/a2a/helper/message/send', call(taskId, 3), SECOND_KEY);
    expect((theirs.json.error as { code: number }).code).toBe(-32001);
  });

  it('queries on pod B a document ingested on pod A (Milvus + Redis), for its key only', async () => {
    const text = 'The staff canteen serves lunch from noon until two, with a vegetarian dish every day.';
    const ingested = await post(a(), '/rag/ingest', {
      embedding_model: 'embed-test',
      text,
      filename: 'canteen.txt',
      index: 'ops',
    });
    expect(ingested.status).toBe(200);
    const answer = await post(b(), '/rag/query', {
      model: 'gpt-test',
      index: 'ops',
      query: 'When does the canteen serve lunch?',
    });
    expect(answer.status).toBe(200);
    expect(answer.json.citations).toEqual([
      expect.objectContaining({ filename: 'canteen.txt', text, source: 1 }),
    ]);
    const other = await post(
      b(),
      '/rag/query',
      { model: 'gpt-test', index: 'ops', query: 'lunch?' },
      SECOND_KEY,
    );
    expect(other.status).toBe(404);
  });
});
