/**
 * Reading a video job (its record or its content) is a call like any other: the key's rate
 * limit counts it, found or not, before anything reaches the provider, and it leaves a usage
 * record. Unmetered reads would let one key hammer the provider account every tenant shares.
 * And a key that may no longer use the job's model no longer reaches the job, as for files.
 */
import { rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReloadEvent } from '../../dataplane/src/config/store.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';
import { usageRecord } from '../harness/usage-record.ts';

const KEY = 'sk-video-reads';
const LIMITED_KEY = 'sk-video-reads-limited';

let stack: Stack;
let fakeUrl: string;

/** `models` restricts the reader key when given. */
const config = (models?: string[]): string =>
  [
    deployment({
      name: 'sora',
      model: 'sora',
      baseUrl: fakeBase(fakeUrl),
      capabilities: ['video'],
      extra: { pricing: { inputPerMillionTokens: 0, outputPerMillionTokens: 0, perSecond: 0.1 } },
    }),
    deployment({ name: 'chat', model: 'chat', baseUrl: fakeBase(fakeUrl) }),
    tenant('acme'),
    apiKey('reader', KEY, 'acme', models ? { models } : {}),
    apiKey('limited', LIMITED_KEY, 'acme', { rateLimit: { requestsPerMinute: 3 } }),
  ].join('');

beforeAll(async () => {
  stack = await startStack(
    ([url]) => {
      fakeUrl = url!;
      return config();
    },
    { watch: true },
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

/** Replace the config as a ConfigMap update does and wait for the reload event (no sleeps). */
async function reload(text: string): Promise<ReloadEvent> {
  const reloaded = new Promise<ReloadEvent>((resolve) => {
    const off = stack.gateway.config.onReload((event) => {
      off();
      resolve(event);
    });
  });
  const aside = join(dirname(stack.configFile), '.gantry.yaml.next');
  await writeFile(aside, text);
  await rename(aside, stack.configFile);
  return reloaded;
}

describe('a key no longer allowed the job model', () => {
  it('reaches neither the job nor its content (404 naming the deployment), and the provider is not asked', async () => {
    const id = await create(KEY);
    expect((await reload(config(['chat']))).ok).toBe(true);
    try {
      const before = stack.fakes[0]!.requests.length;
      for (const path of [`/videos/${id}`, `/videos/${id}/content`]) {
        const res = await call('GET', path, KEY);
        expect(res.status).toBe(404);
        const body = JSON.parse(res.bytes.toString()) as { error: { message: string; type: string } };
        expect(body.error.type).toBe('not_found');
        expect(body.error.message).toContain('no longer configured for this key');
      }
      expect(stack.fakes[0]!.requests.length).toBe(before);
    } finally {
      expect((await reload(config())).ok).toBe(true);
    }
    expect((await call('GET', `/videos/${id}`, KEY)).status).toBe(200);
  });
});
