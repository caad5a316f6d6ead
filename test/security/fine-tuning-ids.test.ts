/**
 * A fine-tuning job id is Gantry's wrapper around the deployment and the upstream's id, so a
 * caller can forge one with any upstream id inside. Only ids shaped like a provider's job id
 * are sent upstream: a forged one carrying a path (`../files/...`), however encoded, is the 404
 * of an unknown job without any upstream call, on retrieve and on cancel.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobId } from '../../dataplane/src/pipeline/fine-tuning/jobs.ts';
import { failure } from '../harness/resources.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEY = 'sk-ft-ids';
let stack: Stack;
let client: OpenAI;

beforeAll(async () => {
  stack = await startStack(([url]) =>
    [
      deployment({
        name: 'tuner',
        model: 'ft-test',
        baseUrl: fakeBase(url!),
        capabilities: ['chat', 'fine_tuning', 'files'],
      }),
      tenant('acme'),
      apiKey('owner', KEY, 'acme'),
    ].join(''),
  );
  client = new OpenAI({ baseURL: stack.baseURL, apiKey: KEY, maxRetries: 0 });
});
afterAll(() => stack.close());

describe('a forged fine-tuning job id', () => {
  it.each(['../../files/file-abc/content', '..', 'ftjob-1/../../models', 'a b', 'a%2Fb'])(
    'with upstream id %j is an unknown job, and nothing is asked upstream',
    async (upstreamId) => {
      const id = jobId({ deployment: 'tuner', upstreamId });
      const before = stack.fakes[0]!.requests.length;
      for (const call of [client.fineTuning.jobs.retrieve(id), client.fineTuning.jobs.cancel(id)]) {
        const err = await failure(call);
        expect(err.status).toBe(404);
        expect(err.error).toMatchObject({ type: 'not_found', param: 'fine_tuning_job_id' });
      }
      expect(stack.fakes[0]!.requests.length).toBe(before);
    },
  );

  it('shaped like a provider id still reaches the provider, which does not know it', async () => {
    const before = stack.fakes[0]!.requests.length;
    const err = await failure(
      client.fineTuning.jobs.retrieve(jobId({ deployment: 'tuner', upstreamId: 'ftjob-nope' })),
    );
    expect(err.status).toBe(404);
    expect(stack.fakes[0]!.requests.length).toBe(before + 1);
  });
});
