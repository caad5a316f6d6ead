/** `POST /v1/utils/token_counter` over raw HTTP, in LiteLLM's request and response shape. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';
import { usageRecord } from '../harness/usage-record.ts';

const KEY = 'sk-token-counter';
const NARROW_KEY = 'sk-token-counter-narrow';
let stack: Stack;

beforeAll(async () => {
  stack = await startStack(([url]) =>
    [
      deployment({ name: 'chat', model: 'gpt-test', upstreamModel: 'gpt-4o-up', baseUrl: fakeBase(url!) }),
      deployment({ name: 'other', model: 'other-test', baseUrl: fakeBase(url!) }),
      tenant('acme'),
      apiKey('acme-key', KEY, 'acme', { rateLimit: { requestsPerMinute: 1000 } }),
      apiKey('narrow-key', NARROW_KEY, 'acme', { models: ['gpt-test'] }),
    ].join(''),
  );
});
afterAll(() => stack.close());

const count = (body: unknown, key = KEY) =>
  fetch(`${stack.baseURL}/utils/token_counter`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

describe('token counter', () => {
  it('counts a chat request with the o200k tokenizer, per-message overhead included', async () => {
    const res = await count({ model: 'gpt-test', messages: [{ role: 'user', content: 'hello world' }] });
    expect(res.status).toBe(200);
    // "hello world" is 2 o200k tokens; each message carries 4 tokens of framing.
    expect(await res.json()).toEqual({
      total_tokens: 6,
      request_model: 'gpt-test',
      model_used: 'gpt-4o-up',
      tokenizer_type: 'openai_tokenizer',
      tokenizer: 'o200k_base',
    });
    expect(res.headers.get('x-ratelimit-remaining-requests')).not.toBeNull();
    const record = await usageRecord(stack, 'acme', res.headers.get('x-gantry-request-id'));
    expect(record).toMatchObject({ endpoint: 'token_counter', status: 200, costUsd: 0, totalTokens: 0 });
  });

  it('counts a bare prompt, and tools add to a chat count', async () => {
    const prompt = (await (await count({ model: 'gpt-test', prompt: 'hello world' })).json()) as {
      total_tokens: number;
    };
    expect(prompt.total_tokens).toBe(2);
    const messages = [{ role: 'user', content: 'hi' }];
    const plain = (await (await count({ model: 'gpt-test', messages })).json()) as { total_tokens: number };
    const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }];
    const withTools = (await (await count({ model: 'gpt-test', messages, tools })).json()) as {
      total_tokens: number;
    };
    expect(withTools.total_tokens).toBeGreaterThan(plain.total_tokens);
  });

  it('refuses models the key may not use, and names what is missing or malformed', async () => {
    const denied = await count({ model: 'other-test', prompt: 'x' }, NARROW_KEY);
    expect(denied.status).toBe(404);
    const missing = await count({ model: 'gpt-test' });
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as { error: { message: string } }).error.message).toContain('messages');
    const bad = await count({ model: 'gpt-test', messages: 'hello' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toContain('messages');
    expect((await count({ model: 'gpt-test', prompt: 'x' }, 'sk-nope')).status).toBe(401);
  });
});
