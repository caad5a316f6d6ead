/**
 * A request refused before its pipeline names the endpoint (a schema 400, an unknown model)
 * is recorded under the endpoint it was sent to, not as a chat.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';
import { usageRecord } from '../harness/usage-record.ts';

const KEY = 'sk-endpoint-label';
let stack: Stack;

beforeAll(async () => {
  stack = await startStack(([url]) =>
    [
      deployment({ name: 'chat', model: 'gpt-test', baseUrl: fakeBase(url!), capabilities: ['chat'] }),
      tenant('acme'),
      apiKey('acme-key', KEY, 'acme'),
    ].join(''),
  );
});
afterAll(() => stack.close());

const send = (method: string, path: string, body?: unknown) =>
  fetch(`${stack.gateway.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

describe('usage endpoint of a request refused early', () => {
  const cases: [string, string, unknown, string][] = [
    ['POST', '/v1/embeddings', { model: 5 }, 'embeddings'],
    ['POST', '/v1/messages', { model: 'gpt-test' }, 'messages'],
    ['POST', '/v1/responses', { model: 7 }, 'responses'],
    ['POST', '/v1/rerank', { model: 'gpt-test' }, 'rerank'],
    ['POST', '/v1/moderations', { input: 5 }, 'moderations'],
    ['POST', '/v1/completions', { model: 'gpt-test' }, 'completions'],
    ['POST', '/v1/images/generations', { model: 'gpt-test' }, 'images'],
    ['POST', '/v1/audio/speech', { model: 'gpt-test' }, 'audio.speech'],
    ['POST', '/v1/ocr', { model: 'gpt-test' }, 'ocr'],
    ['POST', '/v1/rag/query', { model: 'gpt-test' }, 'rag.query'],
    ['POST', '/v1/fine_tuning/jobs', { model: 5 }, 'fine_tuning'],
    ['POST', '/v1/models/gpt-test:generateContent', { contents: 5 }, 'generate_content'],
    ['POST', '/v1/streamGenerateContent?alt=sse', { contents: 5 }, 'generate_content'],
    ['POST', '/v1/messages/count_tokens', { model: 5 }, 'token_counter'],
    ['POST', '/v1/utils/token_counter', { model: 5 }, 'token_counter'],
    ['POST', '/v1/rag/ingest', { model: 5 }, 'rag.ingest'],
    ['POST', '/v1/audio/transcriptions', { model: 5 }, 'audio.transcriptions'],
    ['POST', '/v1/videos', { model: 5 }, 'videos'],
    ['POST', '/v1/batches', { input_file_id: 5 }, 'batches'],
    ['GET', '/v1/files/file-nope', undefined, 'files'],
    ['POST', '/v1/interactions', { model: 5 }, 'interactions'],
    ['GET', '/v1/models/no-such-model', undefined, 'models'],
    ['POST', '/v1/chat/completions', { model: 5 }, 'chat'],
  ];
  it.each(cases)('%s %s', async (method, path, body, endpoint) => {
    const res = await send(method, path, body);
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    const rec = await usageRecord(stack, 'acme', res.headers.get('x-gantry-request-id'));
    expect(rec.endpoint).toBe(endpoint);
  });
});

describe('model list and lookup', () => {
  it('leave no usage record when they succeed', async () => {
    for (const path of ['/v1/models', '/v1/models/gpt-test']) {
      const res = await send('GET', path);
      expect(res.status).toBe(200);
      await expect(usageRecord(stack, 'acme', res.headers.get('x-gantry-request-id'))).rejects.toThrow(
        /no usage record/,
      );
    }
  });
});
