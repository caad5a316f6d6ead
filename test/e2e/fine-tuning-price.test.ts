/**
 * A fine-tuning job is priced by the deployment that created it, whichever deployment of the
 * same provider account the caller reads it through: two models on one account, one with a
 * dear training price and one with a cheap one.
 */
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobId, parseJobId } from '../../dataplane/src/pipeline/fine-tuning/jobs.ts';
import { costMicros } from '../harness/resources.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const BUDGET = { limitUsd: 1, period: 'monthly' as const };
/** $0.025 a trained token on `big`, $0.000001 on `small`. */
const DEAR = { inputPerMillionTokens: 1, outputPerMillionTokens: 10_000, trainingPerMillionTokens: 25_000 };
const CHEAP = { inputPerMillionTokens: 1, outputPerMillionTokens: 10_000, trainingPerMillionTokens: 1 };
const KEYS = ['via-cheap', 'list'] as const;
type K = (typeof KEYS)[number];

describe('fine-tuning training price', () => {
  let stack: Stack;
  const clients = {} as Record<K, OpenAI>;
  beforeAll(async () => {
    stack = await startStack(
      ([url]) =>
        [
          deployment({
            name: 'tuner-dear',
            model: 'big',
            baseUrl: fakeBase(url!),
            capabilities: ['chat', 'fine_tuning', 'files'],
            pricing: DEAR,
          }),
          deployment({
            name: 'tuner-cheap',
            model: 'small',
            baseUrl: fakeBase(url!),
            capabilities: ['chat', 'fine_tuning', 'files'],
            pricing: CHEAP,
          }),
          tenant('acme'),
          ...KEYS.map((k) => apiKey(k, `sk-price-${k}`, 'acme', { budget: BUDGET })),
        ].join(''),
      { batchSweepMs: 0 },
    );
    for (const k of KEYS)
      clients[k] = new OpenAI({ baseURL: stack.baseURL, apiKey: `sk-price-${k}`, maxRetries: 0 });
  });
  afterAll(() => stack.close());

  const state = (k: K) =>
    stack.gateway.stores.budgets.state({ tenant: 'acme', keyId: `default/${k}` }, BUDGET);

  /** A 3-epoch job on `big`, taken to succeeded upstream unseen; its training at the dear price, in µ$. */
  async function succeededOnDear(k: K) {
    const file = await clients[k].files.create(
      {
        file: await toFile(Buffer.from('{"messages":[{"role":"user","content":"hi"}]}\n'), 'train.jsonl'),
        purpose: 'fine-tune',
      },
      { headers: { 'x-gantry-model': 'big' } },
    );
    const job = await clients[k].fineTuning.jobs.create({
      model: 'big',
      training_file: file.id,
      hyperparameters: { n_epochs: 3 },
    });
    const up = parseJobId(job.id)!.upstreamId;
    expect(parseJobId(job.id)!.deployment).toBe('tuner-dear');
    let upstream: Record<string, unknown> = {};
    for (let i = 0; i < 2; i++)
      upstream = (await (
        await fetch(`${stack.fakes[0]!.url}/v1/fine_tuning/jobs/${up}`, {
          headers: { authorization: 'Bearer sk-fake' },
        })
      ).json()) as Record<string, unknown>;
    expect(upstream.status).toBe('succeeded');
    const dueMicros = Math.round(Number(upstream.trained_tokens) * DEAR.trainingPerMillionTokens);
    expect(dueMicros).toBeGreaterThan(1000);
    return { job, up, dueMicros };
  }

  it("charges the creating deployment's price when read through a cheaper deployment of the account", async () => {
    const { job, up, dueMicros } = await succeededOnDear('via-cheap');
    const via = await clients['via-cheap'].fineTuning.jobs
      .retrieve(jobId({ deployment: 'tuner-cheap', upstreamId: up }))
      .withResponse();
    expect(via.data.status).toBe('succeeded');
    // The usage the read reports is the charge.
    expect(costMicros(via.response.headers)).toBe(dueMicros);
    await clients['via-cheap'].fineTuning.jobs.retrieve(job.id);
    await stack.gateway.sweepJobs();
    expect(Math.round((await state('via-cheap')).spentUsd * 1e6)).toBe(dueMicros);
    expect((await state('via-cheap')).heldUsd).toBe(0);
  });

  it("charges the creating deployment's price through a list", async () => {
    const { dueMicros } = await succeededOnDear('list');
    const listed = await clients.list.fineTuning.jobs.list().withResponse();
    expect(listed.data.data).toHaveLength(1);
    expect(costMicros(listed.response.headers)).toBe(dueMicros);
    expect(Math.round((await state('list')).spentUsd * 1e6)).toBe(dueMicros);
  });
});
