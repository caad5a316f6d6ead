/** `POST /v1/moderations` through the openai client, answered by Gantry's own detector. */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEY = 'sk-test-moderations';
let stack: Stack;
let client: OpenAI;

beforeAll(async () => {
  stack = await startStack(([url]) =>
    [
      deployment({ name: 'gpt', model: 'gpt-test', baseUrl: fakeBase(url!) }),
      tenant('acme'),
      apiKey('acme-key', KEY, 'acme'),
    ].join(''),
  );
  client = new OpenAI({ baseURL: stack.baseURL, apiKey: KEY, maxRetries: 0 });
});
afterAll(() => stack.close());

describe('moderations', () => {
  it('answers in the OpenAI shape, one result per input, without a provider call or a charge', async () => {
    const before = stack.fakes[0]!.requests.length;
    const { data, response } = await client.moderations
      .create({ model: 'omni-moderation-latest', input: ['You are a worthless idiot.', 'Have a nice day!'] })
      .withResponse();
    expect(data.id).toMatch(/^modr-/);
    expect(data.results).toHaveLength(2);
    expect(data.results[0]).toMatchObject({ flagged: true, categories: { harassment: true } });
    expect(data.results[0]!.category_scores.harassment).toBeGreaterThanOrEqual(0.5);
    expect(data.results[1]!.flagged).toBe(false);
    expect(stack.fakes[0]!.requests.length).toBe(before);
    expect(response.headers.get('x-gantry-cost')).toBeNull();
  });

  it('refuses image inputs by name and needs a key', async () => {
    const err = await client.moderations
      .create({ input: [{ type: 'image_url', image_url: { url: 'https://example.com/x.png' } }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({
      param: 'input[0].type',
    });
    const anon = new OpenAI({ baseURL: stack.baseURL, apiKey: 'sk-wrong', maxRetries: 0 });
    await expect(anon.moderations.create({ input: 'x' })).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
  });
});
