/**
 * A request naming an object the caller owns but the provider no longer holds (a video job
 * the provider expired, a training file it deleted) gets a 404 naming that object, and the
 * provider's 404 is not held against the deployment: a caller repeating such a request must
 * not open the circuit of a deployment every other caller shares. Only a 404 that blames the
 * object (names its id, or its field) is read so: a deployment answering 404 to everything
 * (a misrouted base URL, Azure's missing deployment) is an outage, counted and reported as one.
 * A 403 naming the object ("no permission to access the File x, or it may not exist") is read
 * the same way as such a 404.
 */
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';
import { failure } from '../harness/resources.ts';

const KEY = 'sk-lost-object';
const KEY_ID = 'default/owner';
/** More tries than the breaker's failure threshold (3). */
const TRIES = 6;

let stack: Stack;
let client: OpenAI;

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
      deployment({
        name: 'tuner',
        model: 'ft-test',
        baseUrl: fakeBase(url!),
        capabilities: ['chat', 'fine_tuning', 'files'],
      }),
      tenant('acme'),
      apiKey('owner', KEY, 'acme', { budget: { limitUsd: 50, period: 'monthly' } }),
    ].join(''),
  );
  client = new OpenAI({ baseURL: stack.baseURL, apiKey: KEY, maxRetries: 0 });
});
afterAll(() => stack.close());
beforeEach(() => {
  stack.fakes[0]!.setFaults([]);
  stack.gateway.health.reset();
});

async function post(path: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${stack.baseURL}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

const upload = async (): Promise<string> =>
  (
    await client.files.create({
      file: await toFile(Buffer.from('{"messages":[{"role":"user","content":"hi"}]}\n'), 'train.jsonl'),
      purpose: 'fine-tune',
    })
  ).id;

/** Upstream attempts of `deployment` that ended in the provider's 404, from the admin port's metrics. */
async function notFoundAttempts(deployment: string): Promise<number> {
  const text = await (await fetch(`${stack.gateway.adminUrl}/metrics`)).text();
  return text
    .split('\n')
    .filter(
      (l) =>
        l.startsWith('gantry_upstream_attempts_total{') &&
        l.includes(`deployment="${deployment}"`) &&
        l.includes('outcome="not_found"'),
    )
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

describe('an owned object the provider no longer holds', () => {
  it('remixing such a video is a 404 naming video_id, and the deployment stays healthy', async () => {
    const created = await post('/videos', { model: 'sora', prompt: 'waves', seconds: '2' });
    expect(created.status).toBe(200);
    const id = String(created.json.id);
    const job = await stack.gateway.stores.videoJobs.get({ tenant: 'acme', keyId: KEY_ID }, id);
    stack.fakes[0]!.setFaults([
      {
        match: { path: '/remix' },
        fault: { type: 'status', status: 404, message: `Video ${job!.upstreamId} not found` },
      },
    ]);
    for (let i = 0; i < TRIES; i++) {
      const res = await post(`/videos/${id}/remix`, { prompt: 'at night' });
      expect(res.status).toBe(404);
      expect(res.json.error).toMatchObject({ type: 'not_found', code: 404, param: 'video_id' });
      expect(String((res.json.error as { message: string }).message)).toContain(id);
    }
    stack.fakes[0]!.setFaults([]);
    expect(stack.gateway.health.circuitState('sora')).toBe('closed');
    expect((await post('/videos', { model: 'sora', prompt: 'dawn', seconds: '2' })).status).toBe(200);
  });

  it('a fine-tuning job on such a training file is a 404 naming training_file, and the deployment stays healthy', async () => {
    const file = { id: await upload() };
    stack.fakes[0]!.setFaults([
      {
        match: { path: '/fine_tuning/jobs' },
        // OpenAI's words for a file it does not hold.
        fault: { type: 'status', status: 404, message: `No such File object: ${file.id}`, param: 'id' },
      },
    ]);
    for (let i = 0; i < TRIES; i++) {
      const err = await failure(client.fineTuning.jobs.create({ model: 'ft-test', training_file: file.id }));
      expect(err.status).toBe(404);
      expect(err.error).toMatchObject({ type: 'not_found', code: 404, param: 'training_file' });
    }
    stack.fakes[0]!.setFaults([]);
    expect(stack.gateway.health.circuitState('tuner')).toBe('closed');
    const job = await client.fineTuning.jobs.create({ model: 'ft-test', training_file: file.id });
    expect(job.id).toMatch(/^ftjob-gty/);
  });

  it('a training file the upstream will not let the key read (403) is a 404 naming training_file, and the deployment stays healthy', async () => {
    const file = { id: await upload() };
    stack.fakes[0]!.setFaults([
      { match: { path: '/fine_tuning/jobs' }, fault: { type: 'status', status: 403, missing: file.id } },
    ]);
    for (let i = 0; i < TRIES; i++) {
      const err = await failure(client.fineTuning.jobs.create({ model: 'ft-test', training_file: file.id }));
      expect(err.status).toBe(404);
      expect(err.error).toMatchObject({ type: 'not_found', code: 404, param: 'training_file' });
    }
    stack.fakes[0]!.setFaults([]);
    expect(stack.gateway.health.circuitState('tuner')).toBe('closed');
  });

  it('a lost validation file is a 404 naming validation_file, not training_file', async () => {
    const [training, validation] = [await upload(), await upload()];
    stack.fakes[0]!.setFaults([
      {
        match: { path: '/fine_tuning/jobs' },
        fault: { type: 'status', status: 404, message: `No such File object: ${validation}`, param: 'id' },
      },
    ]);
    const err = await failure(
      client.fineTuning.jobs.create({
        model: 'ft-test',
        training_file: training,
        validation_file: validation,
      }),
    );
    expect(err.status).toBe(404);
    expect(err.error).toMatchObject({ type: 'not_found', param: 'validation_file' });
    // The upstream's param, when it names the field, decides without the id.
    stack.fakes[0]!.setFaults([
      {
        match: { path: '/fine_tuning/jobs' },
        fault: { type: 'status', status: 404, message: 'that file is gone', param: 'validation_file' },
      },
    ]);
    const named = await failure(
      client.fineTuning.jobs.create({
        model: 'ft-test',
        training_file: training,
        validation_file: validation,
      }),
    );
    expect(named.error).toMatchObject({ type: 'not_found', param: 'validation_file' });
  });
});

describe('a deployment answering 404 to every path (misrouted, or its Azure deployment gone)', () => {
  const gone = 'The API deployment for this resource does not exist.';

  it('is an upstream failure naming the deployment and its message, counted, and opens the circuit', async () => {
    const file = await upload();
    const created = await post('/videos', { model: 'sora', prompt: 'waves', seconds: '2' });
    const video = String(created.json.id);
    stack.fakes[0]!.setFaults([
      { fault: { type: 'status', status: 404, code: 'DeploymentNotFound', message: gone } },
    ]);
    const [tunerBefore, soraBefore] = [await notFoundAttempts('tuner'), await notFoundAttempts('sora')];
    for (let i = 0; i < 3; i++) {
      const err = await failure(
        client.fineTuning.jobs.create({
          model: 'ft-test',
          training_file: file,
          hyperparameters: { n_epochs: 1 },
        }),
      );
      expect(err.status).toBe(502);
      expect(String(err.error.message)).toContain('tuner');
      expect(String(err.error.message)).toContain(gone);
      const remix = await post(`/videos/${video}/remix`, { prompt: 'at night' });
      expect(remix.status).toBe(502);
      expect(String((remix.json.error as { message: string }).message)).toContain(gone);
    }
    expect(await notFoundAttempts('tuner')).toBe(tunerBefore + 3);
    expect(await notFoundAttempts('sora')).toBe(soraBefore + 3);
    expect(stack.gateway.health.circuitState('tuner')).toBe('open');
    expect(stack.gateway.health.circuitState('sora')).toBe('open');
  });

  it("is an upstream failure when its 404 only echoes the request's path, which names the video", async () => {
    const created = await post('/videos', { model: 'sora', prompt: 'waves', seconds: '2' });
    const video = String(created.json.id);
    const job = await stack.gateway.stores.videoJobs.get({ tenant: 'acme', keyId: KEY_ID }, video);
    // A framework's 404 for a route it does not serve, echoing the path with the upstream id.
    const echo = `Route POST:/v1/videos/${job!.upstreamId}/remix not found`;
    stack.fakes[0]!.setFaults([
      { match: { path: '/remix' }, fault: { type: 'status', status: 404, message: echo } },
    ]);
    const before = await notFoundAttempts('sora');
    const remix = await post(`/videos/${video}/remix`, { prompt: 'at night' });
    expect(remix.status).toBe(502);
    expect(String((remix.json.error as { message: string }).message)).toContain('sora');
    expect(await notFoundAttempts('sora')).toBe(before + 1);
  });
});
