/**
 * A fine-tuning create counts against the key's rate limit before its training file is looked
 * up: one naming an unknown, foreign, mis-purposed or overlong file is refused, and still uses
 * up a request, so a caller cannot probe file ids (or load the ownership store) without limit.
 */
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failure } from '../harness/resources.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const LIMITED = 'sk-ft-rate-limited';
const MISUSED = 'sk-ft-rate-misused';

let stack: Stack;
const client = (key: string) => new OpenAI({ baseURL: stack.baseURL, apiKey: key, maxRetries: 0 });

beforeAll(async () => {
  stack = await startStack(([url]) =>
    [
      deployment({
        name: 'tuner',
        model: 'ft-test',
        baseUrl: fakeBase(url!),
        capabilities: ['chat', 'fine_tuning', 'files'],
        pricing: { inputPerMillionTokens: 1, outputPerMillionTokens: 2, trainingPerMillionTokens: 25 },
      }),
      tenant('acme'),
      // Both: the budget's hold is reserved after the lookup, the limit is taken before it.
      apiKey('limited', LIMITED, 'acme', {
        rateLimit: { requestsPerMinute: 2 },
        budget: { limitUsd: 10, period: 'monthly' },
      }),
      apiKey('misused', MISUSED, 'acme', { rateLimit: { requestsPerMinute: 2 } }),
    ].join(''),
  );
});
afterAll(() => stack.close());

const statusOf = (p: Promise<unknown>) => failure(p).then((e) => e.status);

describe('fine-tuning creates refused on their training file', () => {
  it('count against the rate limit: an unknown file, then an overlong one, then the limit', async () => {
    const limited = client(LIMITED);
    const statuses = [
      await statusOf(limited.fineTuning.jobs.create({ model: 'ft-test', training_file: 'file-nope' })),
      await statusOf(limited.fineTuning.jobs.create({ model: 'ft-test', training_file: 'f'.repeat(300) })),
      await statusOf(limited.fineTuning.jobs.create({ model: 'ft-test', training_file: 'file-nope' })),
    ];
    expect(statuses).toEqual([404, 400, 429]);
  });

  it('count against the rate limit when the file was uploaded for another purpose', async () => {
    const misused = client(MISUSED);
    const file = await misused.files.create({
      file: await toFile(Buffer.from('{"messages":[]}\n'), 'a.jsonl'),
      purpose: 'user_data',
    });
    const create = () => misused.fineTuning.jobs.create({ model: 'ft-test', training_file: file.id });
    expect([await statusOf(create()), await statusOf(create())]).toEqual([400, 429]);
  });
});
