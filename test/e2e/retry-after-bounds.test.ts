/**
 * A provider's Retry-After is advice the router follows only within bounds: an absurd one
 * (1e12 seconds) must neither keep a deployment out of rotation for good nor be handed to
 * the caller, and a negative one is no advice (not "retry at once"). Driven through the
 * official openai and @anthropic-ai/sdk clients against fake providers.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_RETRY } from '../../dataplane/src/router/policy.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';
import { until } from '../harness/until.ts';

const KEY = 'sk-test-retry-after';
/** The router's bound on a believed Retry-After, short so the deployment's return is seen. */
const MAX_COOLDOWN_MS = 400;
let stack: Stack;
let openai: OpenAI;
let anthropic: Anthropic;
const fake = () => stack.fakes[0]!;

beforeAll(async () => {
  stack = await startStack(
    ([url]) =>
      [
        deployment({ name: 'solo', model: 'solo', baseUrl: fakeBase(url!) }),
        deployment({
          name: 'claude-solo',
          model: 'claude-solo',
          provider: 'anthropic',
          baseUrl: fakeBase(url!, 'anthropic'),
        }),
        tenant('acme'),
        apiKey('k', KEY, 'acme'),
      ].join(''),
    {
      retry: { ...DEFAULT_RETRY, backoffBaseMs: 10, backoffMaxMs: 20, maxCooldownMs: MAX_COOLDOWN_MS },
    },
  );
  openai = new OpenAI({ baseURL: stack.baseURL, apiKey: KEY, maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: stack.gateway.url, apiKey: KEY, maxRetries: 0 });
});
afterAll(() => stack.close());
beforeEach(() => {
  fake().reset();
  stack.gateway.health.reset();
});

const ask = (model: string) =>
  openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] }).withResponse();

describe('Retry-After bounds', () => {
  it('a 429 asking to wait 1e12 s is waited out for the bounded time, then retried', async () => {
    fake().setFaults([
      { match: { model: 'solo' }, fault: { type: 'status', status: 429, retryAfterSeconds: 1e12 }, times: 1 },
    ]);
    const { response } = await ask('solo');
    expect(response.headers.get('x-gantry-provider')).toBe('solo');
    expect(response.headers.get('x-gantry-attempts')).toBe('2');
  });

  it('a deployment that keeps asking for 1e12 s: the caller is told the bounded wait, and it comes back', async () => {
    const attempts = 1 + DEFAULT_RETRY.maxSameRetries;
    fake().setFaults([
      {
        match: { model: 'solo' },
        fault: { type: 'status', status: 429, retryAfterSeconds: 1e12 },
        times: attempts,
      },
    ]);
    const err = (await ask('solo').catch((e: unknown) => e)) as InstanceType<typeof OpenAI.RateLimitError>;
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(err.headers?.get('retry-after')).toBe(String(Math.ceil(MAX_COOLDOWN_MS / 1000)));
    expect(fake().requests).toHaveLength(attempts);
    // While it cools down the caller is told a bounded wait too; then the deployment serves again.
    const served = await until(
      'the rate-limited deployment to serve again',
      async () => {
        const res = await ask('solo').catch((e: unknown) => e);
        if (res instanceof OpenAI.RateLimitError) {
          expect(Number(res.headers?.get('retry-after'))).toBeLessThanOrEqual(1);
          return undefined;
        }
        return res as Awaited<ReturnType<typeof ask>>;
      },
      5_000,
    );
    expect(served.response.headers.get('x-gantry-provider')).toBe('solo');
  });

  it('an Anthropic 429 with a negative retry-after is not passed on as "retry at once"', async () => {
    fake().setFaults([
      { match: { model: 'claude-solo' }, fault: { type: 'status', status: 429, retryAfterSeconds: -5 } },
    ]);
    const err = await anthropic.messages
      .create({ model: 'claude-solo', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.RateLimitError);
    const e = err as InstanceType<typeof Anthropic.RateLimitError>;
    expect(e.headers?.get('retry-after')).toBeNull();
    // The gateway backed off and retried twice (its last-resort rule), never an instant loop.
    expect(fake().requests).toHaveLength(1 + DEFAULT_RETRY.maxSameRetries);
  });
});
