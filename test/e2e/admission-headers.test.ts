/**
 * The `x-ratelimit-*` headers over HTTP when the budget store, not the rate limit, refuses: a
 * key with both is counted on its rate limit first, so a 503 from a budget store that is down
 * still tells a client pacing itself where its window stands (and says nothing of the budget,
 * which is not known). Through the official openai client, against the real in-process stores
 * with one fault injected.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '../../dataplane/src/stores/errors.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEY = 'sk-test-admission-headers';
const RATE = { requestsPerMinute: 10, tokensPerMinute: 100_000 };

let stack: Stack;
let client: OpenAI;

beforeAll(async () => {
  stack = await startStack(([url]) =>
    [
      deployment({ name: 'gpt', model: 'gpt', baseUrl: fakeBase(url!) }),
      tenant('acme'),
      apiKey('k', KEY, 'acme', { rateLimit: RATE, budget: { limitUsd: 10, period: 'monthly' } }),
    ].join(''),
  );
  client = new OpenAI({ baseURL: stack.baseURL, apiKey: KEY, maxRetries: 0 });
});
afterAll(() => stack.close());

const ask = () =>
  client.chat.completions.create({
    model: 'gpt',
    messages: [{ role: 'user', content: 'hi' }],
    max_tokens: 5,
  });

describe('a budget store that is down, for a key with a rate limit and a budget', () => {
  it('answers the 503 with the rate-limit headers of the window it counted the request in', async () => {
    const budgets = stack.gateway.stores.budgets;
    const reserve = budgets.reserve.bind(budgets);
    budgets.reserve = () => Promise.reject(new StoreUnavailableError('budget.reserve'));
    let err: unknown;
    try {
      err = await ask().then(
        () => undefined,
        (e: unknown) => e,
      );
    } finally {
      budgets.reserve = reserve;
    }
    expect(err).toBeInstanceOf(OpenAI.APIError);
    const e = err as InstanceType<typeof OpenAI.APIError>;
    expect(e.status).toBe(503);
    expect(e.headers?.get('retry-after')).toBe('1');
    // The key's first request: it counts, its tokens were given back with the failure.
    expect(e.headers?.get('x-ratelimit-limit-requests')).toBe(String(RATE.requestsPerMinute));
    expect(e.headers?.get('x-ratelimit-remaining-requests')).toBe(String(RATE.requestsPerMinute - 1));
    expect(e.headers?.get('x-ratelimit-limit-tokens')).toBe(String(RATE.tokensPerMinute));
    expect(e.headers?.get('x-ratelimit-remaining-tokens')).toBe(String(RATE.tokensPerMinute));
    expect(e.headers?.get('x-ratelimit-reset-requests')).toMatch(/^\d+(ms|s|m\d+s)$/);

    // The store back, the next request is served and its headers carry on from that window.
    const served = await ask().withResponse();
    expect(served.response.headers.get('x-ratelimit-remaining-requests')).toBe(
      String(RATE.requestsPerMinute - 2),
    );
    // No budget figure is invented: the store that knows it could not be asked.
    expect([...(e.headers?.keys() ?? [])].filter((h) => h.includes('budget'))).toEqual([]);
  });
});
