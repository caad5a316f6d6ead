/** `GET /v1/models/{id}` through the openai client and `messages.countTokens` through Anthropic's. */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { estimatePromptTokens } from '../../dataplane/src/accounting/tokens.ts';
import { messagesToChat } from '../../dataplane/src/formats/anthropic/index.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEY = 'sk-test-models';
const NARROW_KEY = 'sk-test-models-narrow';
let stack: Stack;

beforeAll(async () => {
  stack = await startStack(([url]) =>
    [
      deployment({ name: 'gpt', model: 'gpt-test', baseUrl: fakeBase(url!) }),
      deployment({
        name: 'claude',
        model: 'anthropic/claude-test',
        provider: 'anthropic',
        baseUrl: fakeBase(url!, 'anthropic'),
      }),
      tenant('acme'),
      apiKey('acme-key', KEY, 'acme'),
      apiKey('narrow-key', NARROW_KEY, 'acme', { models: ['gpt-test'] }),
    ].join(''),
  );
});
afterAll(() => stack.close());

describe('GET /v1/models/{id}', () => {
  it('returns the model object, slashes in the id included', async () => {
    const openai = new OpenAI({ baseURL: stack.baseURL, apiKey: KEY, maxRetries: 0 });
    expect(await openai.models.retrieve('gpt-test')).toMatchObject({ id: 'gpt-test', object: 'model' });
    const claude = await openai.models.retrieve('anthropic/claude-test');
    expect(claude).toMatchObject({ id: 'anthropic/claude-test', object: 'model' });
    expect(typeof claude.created).toBe('number');
    expect(typeof claude.owned_by).toBe('string');
  });

  it('is a 404 for a model the key may not use, exactly as for an unknown one', async () => {
    const narrow = new OpenAI({ baseURL: stack.baseURL, apiKey: NARROW_KEY, maxRetries: 0 });
    const denied = await narrow.models.retrieve('anthropic/claude-test').catch((e: unknown) => e);
    const unknown = await narrow.models.retrieve('no-such-model').catch((e: unknown) => e);
    expect(denied).toBeInstanceOf(OpenAI.NotFoundError);
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
    expect((denied as InstanceType<typeof OpenAI.NotFoundError>).error).toMatchObject({
      type: 'model_not_found',
    });
    expect(await narrow.models.retrieve('gpt-test')).toMatchObject({ id: 'gpt-test' });
  });
});

describe('POST /v1/messages/count_tokens', () => {
  const request = {
    model: 'anthropic/claude-test',
    system: 'You are terse.',
    messages: [
      { role: 'user' as const, content: 'How many tokens is this sentence, roughly?' },
      { role: 'assistant' as const, content: 'Let me count.' },
      { role: 'user' as const, content: [{ type: 'text' as const, text: 'Go on.' }] },
    ],
    tools: [
      {
        name: 'get_weather',
        description: 'Weather for a city',
        input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } },
      },
    ],
  };

  it('answers {input_tokens} with the count budgets use, for any model the key may use', async () => {
    const anthropic = new Anthropic({ baseURL: stack.gateway.url, apiKey: KEY, maxRetries: 0 });
    const before = stack.fakes[0]!.requests.length;
    const counted = await anthropic.messages.countTokens(request);
    const expected = estimatePromptTokens(messagesToChat({ ...request, max_tokens: 1 }));
    expect(counted).toEqual({ input_tokens: expected });
    expect(expected).toBeGreaterThan(10);
    const gpt = await anthropic.messages.countTokens({ ...request, model: 'gpt-test' });
    expect(gpt.input_tokens).toBe(expected);
    // No model was called.
    expect(stack.fakes[0]!.requests.length).toBe(before);
  });

  it('is a 404 for a model the key may not use and a 400 naming a bad field', async () => {
    const narrow = new Anthropic({ baseURL: stack.gateway.url, apiKey: NARROW_KEY, maxRetries: 0 });
    const denied = await narrow.messages.countTokens(request).catch((e: unknown) => e);
    expect(denied).toBeInstanceOf(Anthropic.NotFoundError);
    const bad = await narrow.messages
      .countTokens({ model: 'gpt-test', messages: [] })
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(Anthropic.BadRequestError);
    expect(JSON.stringify((bad as InstanceType<typeof Anthropic.BadRequestError>).error)).toContain(
      'messages',
    );
  });
});
