/**
 * Reading a video job (its record or its content) is a call like any other: the key's rate
 * limit counts it, found or not, before anything reaches the provider, and it leaves a usage
 * record. Unmetered reads would let one key hammer the provider account every tenant shares.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';
import { usageRecord } from '../harness/usage-record.ts';

const KEY = 'sk-video-reads';
const LIMITED_KEY = 'sk-video-reads-limited';

let stack: Stack;

beforeAll(async () => {
  stack = await startStack(([url]) =>
    [
      deployment({
        name: 'sora',
        model: 'sora',
        baseUrl: fakeBase(url!),
        capabilities: ['video'],
        extra: { pricing: { inputPerMillionTokens: 0, outputPerMillionTokens: 0, perSecond: 0.1 } },
      }),
      tenant('acme'),
      apiKey('reader', KEY, 'acme'),
      apiKey('limited', LIMITED_KEY, 'acme', { rateLimit: { requestsPerMinute: 3 } }),
    ].join(''),
  );
});
afterAll(() => stack.close());

async function call(method: string, path: string, key: string, body?: unknown) {
  const res = await fetch(`${stack.baseURL}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  return { status: res.status, headers: res.headers, bytes };
}

const create = async (key: string): Promise<string> => {
  const res = await call('POST', '/videos', key, { model: 'sora', prompt: 'waves', seconds: '1' });
  expect(res.status).toBe(200);
  return String((JSON.parse(res.bytes.toString()) as { id: string }).id);
};

describe('video reads', () => {
  it("count against the key's rate limit, found or not, and past it never reach the provider", async () => {
    const id = await create(LIMITED_KEY);
    const record = await call('GET', `/videos/${id}`, LIMITED_KEY);
    expect(record.status).toBe(200);
    expect(record.headers.get('x-ratelimit-remaining-requests')).toBe('1');
    const unknown = await call('GET', '/videos/video_0123456789abcdef0123456789abcdef', LIMITED_KEY);
    expect(unknown.status).toBe(404);
    const upstreamBefore = stack.fakes[0]!.requests.length;
    for (const path of [`/videos/${id}`, `/videos/${id}/content`]) {
      const refused = await call('GET', path, LIMITED_KEY);
      expect(refused.status).toBe(429);
      expect(JSON.parse(refused.bytes.toString())).toMatchObject({ error: { code: 429 } });
    }
    expect(stack.fakes[0]!.requests.length).toBe(upstreamBefore);
  });

  it('are recorded as video calls at no cost, on the deployment holding the job', async () => {
    const id = await create(KEY);
    for (const path of [`/videos/${id}`, `/videos/${id}/content`]) {
      const res = await call('GET', path, KEY);
      expect(res.status).toBe(200);
      expect(res.bytes.length).toBeGreaterThan(0);
      const rec = await usageRecord(stack, 'acme', res.headers.get('x-gantry-request-id'));
      expect(rec).toMatchObject({
        endpoint: 'videos',
        requestedModel: 'sora',
        deployment: 'sora',
        status: 200,
        costUsd: 0,
      });
    }
  });
});
