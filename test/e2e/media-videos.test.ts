/**
 * Video jobs over raw HTTP: create (both routes, JSON and multipart), read, download and
 * remix, priced per second of video; jobs are visible only to the tenant and key that made them.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAKE_PNG } from '../../dataplane/src/fake-provider/openai-media.ts';
import { FAKE_VIDEO_BYTES_PER_SECOND } from '../../dataplane/src/fake-provider/openai-videos.ts';
import { startGateway } from '../../dataplane/src/gateway.ts';
import { testRedisUrl } from '../harness/redis.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEY = 'sk-media-video';
const SAME_TENANT_KEY = 'sk-media-video-2';
const OTHER_TENANT_KEY = 'sk-media-video-other';
const PER_SECOND = 0.1;
const BUDGET = { limitUsd: 50, period: 'monthly' as const };

let stack: Stack;
let chargedMicros = 0;

beforeAll(async () => {
  stack = await startStack(([url]) =>
    [
      deployment({
        name: 'sora',
        model: 'sora',
        upstreamModel: 'sora-up',
        baseUrl: fakeBase(url!),
        capabilities: ['video'],
        extra: { pricing: { inputPerMillionTokens: 0, outputPerMillionTokens: 0, perSecond: PER_SECOND } },
      }),
      deployment({ name: 'chat', model: 'chat', baseUrl: fakeBase(url!) }),
      tenant('acme'),
      apiKey('video', KEY, 'acme', { budget: BUDGET }),
      apiKey('video-2', SAME_TENANT_KEY, 'acme'),
      tenant('other'),
      apiKey('other', OTHER_TENANT_KEY, 'other'),
    ].join(''),
  );
});
afterAll(() => stack.close());

async function call(
  method: string,
  path: string,
  body?: unknown,
  key = KEY,
): Promise<{ status: number; json: Record<string, unknown>; headers: Headers }> {
  const res = await fetch(`${stack.baseURL}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body !== undefined && !(body instanceof FormData) && { 'content-type': 'application/json' }),
    },
    body: body instanceof FormData ? body : body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as Record<string, unknown>;
  if (res.status === 200) chargedMicros += Math.round(Number(res.headers.get('x-gantry-cost') ?? 0) * 1e6);
  return { status: res.status, json, headers: res.headers };
}

let created: Record<string, unknown>;

describe('video jobs', () => {
  it('POST /v1/videos creates a queued job, charged per second', async () => {
    const res = await call('POST', '/videos', {
      model: 'sora',
      prompt: 'waves at dusk',
      seconds: '8',
      size: '1280x720',
    });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      object: 'video',
      status: 'queued',
      model: 'sora',
      seconds: '8',
      size: '1280x720',
    });
    expect(res.json.id).toMatch(/^video_[0-9a-f]{32}$/);
    expect(typeof res.json.created_at).toBe('number');
    expect(Number(res.headers.get('x-gantry-cost'))).toBeCloseTo(8 * PER_SECOND, 10);
    expect(stack.fakes[0]!.requests.at(-1)!.body).toMatchObject({
      model: 'sora-up',
      prompt: 'waves at dusk',
    });
    created = res.json;
  });

  it('the compatibility route takes the same payload, multipart with a reference image too', async () => {
    const json = await call('POST', '/videos/generations', { model: 'sora', prompt: 'a cat' });
    expect(json.status).toBe(200);
    expect(json.json).toMatchObject({ object: 'video', seconds: '4' });
    const form = new FormData();
    form.set('model', 'sora');
    form.set('prompt', 'animate this');
    form.set('seconds', '2');
    form.set('input_reference', new Blob([FAKE_PNG], { type: 'image/png' }), 'ref.png');
    const multi = await call('POST', '/videos', form);
    expect(multi.status).toBe(200);
    expect(Number(multi.headers.get('x-gantry-cost'))).toBeCloseTo(2 * PER_SECOND, 10);
    expect(stack.fakes[0]!.requests.at(-1)!.body).toMatchObject({ input_reference: { type: 'image/png' } });
  });

  it('GET returns the current record and /content the video bytes', async () => {
    const res = await call('GET', `/videos/${String(created.id)}`);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ id: created.id, status: 'completed', model: 'sora', seconds: '8' });
    const content = await fetch(`${stack.baseURL}/videos/${String(created.id)}/content`, {
      headers: { authorization: `Bearer ${KEY}` },
    });
    expect(content.status).toBe(200);
    expect(content.headers.get('content-type')).toBe('video/mp4');
    const bytes = Buffer.from(await content.arrayBuffer());
    expect(bytes.length).toBe(8 * FAKE_VIDEO_BYTES_PER_SECOND);
    expect(bytes.toString('latin1', 4, 8)).toBe('ftyp');
  });

  it('remix makes a new job of the same length on the same deployment', async () => {
    const res = await call('POST', `/videos/${String(created.id)}/remix`, { prompt: 'now at dawn' });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ object: 'video', seconds: '8', remixed_from_video_id: created.id });
    expect(res.json.id).not.toBe(created.id);
    expect(Number(res.headers.get('x-gantry-cost'))).toBeCloseTo(8 * PER_SECOND, 10);
  });

  it('another key or tenant gets a 404, never the job', async () => {
    for (const key of [SAME_TENANT_KEY, OTHER_TENANT_KEY]) {
      for (const [method, path, body] of [
        ['GET', `/videos/${String(created.id)}`, undefined],
        ['GET', `/videos/${String(created.id)}/content`, undefined],
        ['POST', `/videos/${String(created.id)}/remix`, { prompt: 'x' }],
      ] as const) {
        const res = await call(method, path, body, key);
        expect(res.status).toBe(404);
        expect(res.json).toMatchObject({ error: { type: 'not_found', code: 404 } });
        expect(JSON.stringify(res.json)).not.toContain('waves');
      }
    }
    expect((await call('GET', '/videos/video_nope')).status).toBe(404);
  });

  it('refuses bad fields and models without video', async () => {
    expect(
      (await call('POST', '/videos', { model: 'sora', prompt: 'x', seconds: 'forever' })).json,
    ).toMatchObject({
      error: { param: 'seconds' },
    });
    expect((await call('POST', '/videos', { model: 'sora' })).json).toMatchObject({
      error: { param: 'prompt' },
    });
    expect((await call('POST', '/videos', { model: 'chat', prompt: 'x' })).json).toMatchObject({
      error: { type: 'unsupported_endpoint' },
    });
  });

  it("the key's budget spend is the sum of the charged costs", async () => {
    const state = await stack.gateway.stores.budgets.state(
      { tenant: 'acme', keyId: 'default/video' },
      BUDGET,
    );
    expect(Math.round(state.spentUsd * 1e6)).toBe(chargedMicros);
    expect(chargedMicros).toBe(Math.round((8 + 4 + 2 + 8) * PER_SECOND * 1e6));
  });
});

describe('video jobs in Redis', () => {
  it('are created through one pod and read, downloaded and remixed through another, by their owner only', async () => {
    const redis = { redisUrl: testRedisUrl(), redisPrefix: `videos-${randomUUID()}` };
    const podA = await startStack(
      ([url]) =>
        [
          deployment({
            name: 'sora',
            model: 'sora',
            baseUrl: fakeBase(url!),
            capabilities: ['video'],
            extra: {
              pricing: { inputPerMillionTokens: 0, outputPerMillionTokens: 0, perSecond: PER_SECOND },
            },
          }),
          tenant('acme'),
          apiKey('video', KEY, 'acme'),
          tenant('other'),
          apiKey('other', OTHER_TENANT_KEY, 'other'),
        ].join(''),
      redis,
    );
    const podB = await startGateway({
      configFile: podA.configFile,
      env: { FAKE_PROVIDER_KEY: 'sk-fake' },
      watch: false,
      drainTimeoutMs: 200,
      ...redis,
    });
    const on = (base: string, method: string, path: string, key = KEY, body?: unknown) =>
      fetch(`${base}/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    try {
      const made = await on(podA.gateway.url, 'POST', '/videos', KEY, {
        model: 'sora',
        prompt: 'tide',
        seconds: '4',
      });
      expect(made.status).toBe(200);
      expect(Number(made.headers.get('x-gantry-cost'))).toBeCloseTo(4 * PER_SECOND, 10);
      const { id } = (await made.json()) as { id: string };
      const read = await on(podB.url, 'GET', `/videos/${id}`);
      expect(read.status).toBe(200);
      expect(await read.json()).toMatchObject({ id, object: 'video', model: 'sora' });
      const content = await on(podB.url, 'GET', `/videos/${id}/content`);
      expect(content.status).toBe(200);
      expect((await content.arrayBuffer()).byteLength).toBeGreaterThan(0);
      const remix = await on(podB.url, 'POST', `/videos/${id}/remix`, KEY, { prompt: 'at night' });
      expect(remix.status).toBe(200);
      expect(Number(remix.headers.get('x-gantry-cost'))).toBeCloseTo(4 * PER_SECOND, 10);
      const stranger = await on(podB.url, 'GET', `/videos/${id}`, OTHER_TENANT_KEY);
      expect(stranger.status).toBe(404);
      expect(JSON.stringify(await stranger.json())).not.toContain('sora');
    } finally {
      await podB.close();
      await podA.close();
    }
  });
});
