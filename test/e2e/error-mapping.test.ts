/**
 * A provider's error reaches the caller with its meaning kept, in SPEC.md's error shape,
 * whatever the provider's own format: busy (OpenAI/Azure 503, Anthropic 529
 * overloaded_error, Gemini UNAVAILABLE) is a 503, a rate limit (Anthropic rate_limit_error,
 * Gemini RESOURCE_EXHAUSTED with its RetryInfo, Azure) a 429 with the provider's Retry-After,
 * a content refusal a content_policy_violation. Each model has one deployment, so the final
 * answer is that deployment's error.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Fault } from '../../dataplane/src/fake-provider/types.ts';
import { DEFAULT_RETRY } from '../../dataplane/src/router/policy.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEY = 'sk-test-error-mapping';
const PROVIDERS = ['openai', 'azure-openai', 'anthropic', 'gemini'] as const;
let stack: Stack;
let openai: OpenAI;
let anthropic: Anthropic;

beforeAll(async () => {
  stack = await startStack(
    ([url]) =>
      [
        ...PROVIDERS.map((provider) =>
          deployment({
            name: `dep-${provider}`,
            model: provider,
            provider,
            baseUrl: fakeBase(url!, provider),
            ...(provider === 'azure-openai' && { extra: { apiVersion: '2024-10-21' } }),
          }),
        ),
        tenant('acme'),
        apiKey('k', KEY, 'acme'),
      ].join(''),
    // No waiting out a Retry-After and no last-resort retries: the first error is the answer.
    { retry: { ...DEFAULT_RETRY, maxRetryAfterMs: 0, maxSameRetries: 0 } },
  );
  openai = new OpenAI({ baseURL: stack.baseURL, apiKey: KEY, maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: stack.gateway.url, apiKey: KEY, maxRetries: 0 });
});
afterAll(() => stack.close());
beforeEach(() => {
  stack.fakes[0]!.reset();
  stack.gateway.health.reset();
});

type Failure = InstanceType<typeof OpenAI.APIError>;
const fail = async (model: string, fault: Fault): Promise<Failure> => {
  stack.fakes[0]!.setFaults([{ fault }]);
  const err = await openai.chat.completions
    .create({ model, messages: [{ role: 'user', content: 'hi' }] })
    .catch((e: unknown) => e);
  expect(err).toBeInstanceOf(OpenAI.APIError);
  return err as Failure;
};

describe('provider errors keep their meaning', () => {
  it.each(PROVIDERS)('%s busy (503, or 529 overloaded): a 503 service_unavailable', async (provider) => {
    // Gemini says it with 503 UNAVAILABLE ("The model is overloaded"), never 529.
    const overloaded = provider === 'gemini' ? 503 : 529;
    for (const fault of [
      { type: 'status', status: 503 },
      { type: 'status', status: overloaded, code: 'overloaded' },
    ] as Fault[]) {
      const err = await fail(provider, fault);
      expect(err.status).toBe(503);
      expect(err.error).toMatchObject({ type: 'service_unavailable', code: 503 });
      expect(err.message).toContain(`dep-${provider}`);
    }
  });

  it.each(PROVIDERS)('%s rate limit: a 429 with the provider’s Retry-After', async (provider) => {
    const err = await fail(provider, { type: 'status', status: 429, retryAfterSeconds: 30 });
    expect(err.status).toBe(429);
    expect(err.error).toMatchObject({ type: 'rate_limit_exceeded', code: 429 });
    expect(err.headers?.get('retry-after')).toBe('30');
  });

  it('Anthropic, through its own SDK: overloaded_error and rate_limit_error raise the SDK’s classes', async () => {
    const ask = () =>
      anthropic.messages
        .create({ model: 'anthropic', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] })
        .catch((e: unknown) => e);
    stack.fakes[0]!.setFaults([{ fault: { type: 'status', status: 529, code: 'overloaded' }, times: 1 }]);
    const busy = await ask();
    expect(busy).toBeInstanceOf(Anthropic.InternalServerError);
    expect((busy as InstanceType<typeof Anthropic.APIError>).status).toBe(503);
    stack.gateway.health.reset();
    stack.fakes[0]!.setFaults([{ fault: { type: 'status', status: 429, retryAfterSeconds: 12 }, times: 1 }]);
    const limited = (await ask()) as InstanceType<typeof Anthropic.RateLimitError>;
    expect(limited).toBeInstanceOf(Anthropic.RateLimitError);
    expect(limited.headers?.get('retry-after')).toBe('12');
    expect(limited.error).toMatchObject({ type: 'error', error: { type: 'rate_limit_exceeded' } });
  });

  it.each(['openai', 'azure-openai', 'anthropic'] as const)(
    '%s content refusal: a 400 content_policy_violation, not retried',
    async (provider) => {
      const err = await fail(provider, { type: 'status', status: 400, code: 'content_policy' });
      expect(err.status).toBe(400);
      expect(err.error).toMatchObject({ type: 'content_policy_violation', code: 400 });
      expect(stack.fakes[0]!.requests).toHaveLength(1);
    },
  );
});
