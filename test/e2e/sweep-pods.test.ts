/**
 * Two pods on one Redis sweeping at the same moment split the job queue: each queued job is
 * read upstream once, not once per pod (each tick leases the records it takes).
 */
import { randomUUID } from 'node:crypto';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../../dataplane/src/gateway.ts';
import { testRedisUrl } from '../harness/redis.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const PRICES = { inputPerMillionTokens: 1, outputPerMillionTokens: 10_000, trainingPerMillionTokens: 25_000 };
const opts = { redisUrl: testRedisUrl(), redisPrefix: `sweep-pods-${randomUUID()}` };
const JOBS = 5;
let stack: Stack;
let pod2: Gateway;

beforeAll(async () => {
  stack = await startStack(
    ([url]) =>
      [
        deployment({
          name: 'tuner',
          model: 'big',
          baseUrl: fakeBase(url!),
          capabilities: ['chat', 'fine_tuning', 'files'],
          pricing: PRICES,
        }),
        tenant('acme'),
        apiKey('k', 'sk-sweep-pods', 'acme', { budget: { limitUsd: 100, period: 'monthly' } }),
      ].join(''),
    { ...opts, batchSweepMs: 0 },
  );
  pod2 = await startGateway({
    env: { FAKE_PROVIDER_KEY: 'sk-fake' },
    watch: false,
    preStopMs: 0,
    drainTimeoutMs: 200,
    ...opts,
    batchSweepMs: 0,
    configFile: stack.configFile,
  });
});

afterAll(async () => {
  await pod2.close();
  await stack.close();
});

it('two pods ticking at once read each queued job once between them, and both read all on the next ticks', async () => {
  const client = new OpenAI({ baseURL: stack.baseURL, apiKey: 'sk-sweep-pods', maxRetries: 0 });
  for (let i = 0; i < JOBS; i++) {
    const file = await client.files.create({
      file: await toFile(Buffer.from('{"messages":[{"role":"user","content":"hi"}]}\n'), 't.jsonl'),
      purpose: 'fine-tune',
    });
    await client.fineTuning.jobs.create({
      model: 'big',
      training_file: file.id,
      hyperparameters: { n_epochs: 3 },
    });
  }
  const reads = (from: number) =>
    stack.fakes[0]!.requests.slice(from).filter(
      (r) => r.method === 'GET' && r.path.includes('/fine_tuning/jobs/'),
    ).length;
  const before = stack.fakes[0]!.requests.length;
  const [a, b] = await Promise.all([stack.gateway.sweepJobs(), pod2.sweepJobs()]);
  expect(reads(before)).toBe(JOBS);
  expect(a.checked + b.checked).toBe(JOBS);
  // The leases end with the tick: a later sweep on one pod reads every job still running.
  const next = stack.fakes[0]!.requests.length;
  expect((await pod2.sweepJobs()).checked).toBe(JOBS);
  expect(reads(next)).toBe(JOBS);
});
