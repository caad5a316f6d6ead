/**
 * A request naming an object the caller owns but the provider no longer holds (a video job
 * the provider expired, a training file it deleted) gets a 404 naming that object, and the
 * provider's 404 is not held against the deployment: a caller repeating such a request must
 * not open the circuit of a deployment every other caller shares.
 */
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';
import { failure } from '../harness/resources.ts';

const KEY = 'sk-lost-object';
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

describe('an owned object the provider no longer holds', () => {
  it('remixing such a video is a 404 naming video_id, and the deployment stays healthy', async () => {
    const created = await post('/videos', { model: 'sora', prompt: 'waves', seconds: '2' });
    expect(created.status).toBe(200);
    const id = String(created.json.id);
    stack.fakes[0]!.setFaults([
      { match: { path: '/remix' }, fault: { type: 'status', status: 404, message: 'Video not found' } },
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
    const file = await client.files.create({
      file: await toFile(Buffer.from('{"messages":[{"role":"user","content":"hi"}]}\n'), 'train.jsonl'),
      purpose: 'fine-tune',
    });
    stack.fakes[0]!.setFaults([
      {
        match: { path: '/fine_tuning/jobs' },
        fault: { type: 'status', status: 404, message: `No such File object: ${file.id}` },
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
});
