/** Router conduct against misbehaving fake providers, observed through the OpenAI SDK. */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fakeAnswer } from '../../dataplane/src/fake-provider/index.ts';
import { costUsd } from '../../dataplane/src/accounting/cost.ts';
import { DEFAULT_RETRY } from '../../dataplane/src/router/policy.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEY = 'sk-test-failover';
const PRICE_A = { inputPerMillionTokens: 100, outputPerMillionTokens: 200 };
const PRICE_B = { inputPerMillionTokens: 3, outputPerMillionTokens: 7 };

let stack: Stack;
let client: OpenAI;
const A = () => stack.fakes[0]!;
const B = () => stack.fakes[1]!;
const C = () => stack.fakes[2]!;

beforeAll(async () => {
  stack = await startStack(
    ([a, b, c]) =>
      [
        deployment({
          name: 'dep-a',
          model: 'm',
          baseUrl: fakeBase(a!),
          priority: 1,
          timeoutMs: 400,
          contextWindow: 8000,
          pricing: PRICE_A,
          fallbacks: ['big'],
        }),
        deployment({
          name: 'dep-b',
          model: 'm',
          baseUrl: fakeBase(b!),
          priority: 2,
          timeoutMs: 400,
          contextWindow: 8000,
          pricing: PRICE_B,
        }),
        deployment({ name: 'dep-big', model: 'big', baseUrl: fakeBase(c!), contextWindow: 128000 }),
        deployment({ name: 'dep-solo', model: 'solo', baseUrl: fakeBase(c!), upstreamModel: 'solo' }),
        tenant('acme'),
        apiKey('k', KEY, 'acme'),
      ].join(''),
    {
      fakes: 3,
      retry: { ...DEFAULT_RETRY, backoffBaseMs: 20, backoffMaxMs: 100, maxRetryAfterMs: 3000 },
      breaker: { failureThreshold: 3, baseOpenMs: 300, maxOpenMs: 1000 },
    },
  );
  client = new OpenAI({ baseURL: stack.baseURL, apiKey: KEY, maxRetries: 0 });
});
afterAll(() => stack.close());

/** Each test starts with healthy providers and a gateway that has forgotten past failures. */
beforeEach(() => {
  for (const f of stack.fakes) f.reset();
  stack.gateway.health.reset();
});

const ask = (model: string, content = 'route me') =>
  client.chat.completions.create({ model, messages: [{ role: 'user', content }] }).withResponse();

describe('failover', () => {
  it('fails over from a 500 and names who served and who failed', async () => {
    A().setFaults([{ fault: { type: 'status', status: 500 }, times: 1 }]);
    const { data, response } = await ask('m');
    expect(data.choices[0]?.message.content).toBe(fakeAnswer('route me'));
    expect(response.headers.get('x-gantry-provider')).toBe('dep-b');
    expect(response.headers.get('x-gantry-attempts')).toBe('2');
    expect(response.headers.get('x-gantry-failed')).toBe('dep-a');
    expect(A().requests).toHaveLength(1);
    expect(B().requests).toHaveLength(1);
  });

  it('fails over a silent deployment without retrying it', async () => {
    A().setFaults([{ fault: { type: 'hang' }, times: 1 }]);
    const { response } = await ask('m');
    expect(response.headers.get('x-gantry-provider')).toBe('dep-b');
    expect(A().requests).toHaveLength(1);
  });

  it('fails over a connection reset before headers', async () => {
    A().setFaults([{ fault: { type: 'reset' }, times: 1 }]);
    const { response } = await ask('m');
    expect(response.headers.get('x-gantry-provider')).toBe('dep-b');
    expect(response.headers.get('x-gantry-failed')).toBe('dep-a');
  });

  it('fails over a 429 and then leaves the deployment alone while it cools down', async () => {
    A().setFaults([{ fault: { type: 'status', status: 429, retryAfterSeconds: 30 }, times: 1 }]);
    const first = await ask('m');
    expect(first.response.headers.get('x-gantry-provider')).toBe('dep-b');
    const second = await ask('m');
    expect(second.response.headers.get('x-gantry-provider')).toBe('dep-b');
    expect(second.response.headers.get('x-gantry-attempts')).toBeNull();
    expect(A().requests).toHaveLength(1);
  });

  it('waits out a Retry-After that fits the budget when no alternative exists', async () => {
    C().setFaults([
      { match: { model: 'solo' }, fault: { type: 'status', status: 429, retryAfterSeconds: 1 }, times: 1 },
    ]);
    const started = Date.now();
    const { response } = await ask('solo');
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(response.headers.get('x-gantry-attempts')).toBe('2');
    expect(C().requests).toHaveLength(2);
  });

  it('returns 429 with Retry-After when the wait does not fit', async () => {
    C().setFaults([
      { match: { model: 'solo' }, fault: { type: 'status', status: 429, retryAfterSeconds: 60 }, times: 1 },
    ]);
    const err = await ask('solo').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    const e = err as InstanceType<typeof OpenAI.RateLimitError>;
    expect(e.headers?.get('retry-after')).toBe('60');
    expect(C().requests).toHaveLength(1);
  });

  it('backs off and retries a 503 without Retry-After when no alternative exists', async () => {
    C().setFaults([{ match: { model: 'solo' }, fault: { type: 'status', status: 503 }, times: 2 }]);
    const { response } = await ask('solo');
    expect(response.headers.get('x-gantry-attempts')).toBe('3');
    expect(C().requests).toHaveLength(3);
  });

  it('bounds attempts when everything fails, answering with the last reason', async () => {
    for (const f of stack.fakes)
      f.setFaults([{ fault: { type: 'status', status: 500, message: 'boom upstream' } }]);
    const err = (await ask('m').catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(err.status).toBe(502);
    expect(err.message).toContain('boom upstream');
    const total = A().requests.length + B().requests.length + C().requests.length;
    expect(total).toBeLessThanOrEqual(DEFAULT_RETRY.maxAttempts);
    expect(err.headers?.get('x-gantry-failed')).toBe('dep-a,dep-b,dep-big');
  });

  it('sends a context-length error to a larger-context fallback, skipping same-size deployments', async () => {
    A().setFaults([{ fault: { type: 'status', status: 400, code: 'context_length_exceeded' } }]);
    const { data, response } = await ask('m');
    expect(response.headers.get('x-gantry-provider')).toBe('dep-big');
    expect(data.model).toBe('big');
    expect(B().requests).toHaveLength(0);
  });

  it('does not retry a content-policy refusal and passes the reason on', async () => {
    A().setFaults([
      { fault: { type: 'status', status: 400, code: 'content_policy', message: 'flagged by policy X' } },
    ]);
    const err = (await ask('m').catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(err.status).toBe(400);
    expect(err.message).toContain('flagged by policy X');
    expect(A().requests.length + B().requests.length + C().requests.length).toBe(1);
  });

  it('bills only the attempt that served', async () => {
    A().setFaults([{ fault: { type: 'status', status: 500 }, times: 1 }]);
    const { data, response } = await ask('m');
    const expected = costUsd(PRICE_B, data.usage!);
    expect(Number(response.headers.get('x-gantry-cost'))).toBeCloseTo(expected, 12);
    expect(expected).toBeGreaterThan(0);
  });
});

describe('circuit breaker', () => {
  it('ejects a failing deployment, probes it, and brings it back', async () => {
    A().setFaults([{ fault: { type: 'status', status: 500 } }]);
    for (let i = 0; i < 3; i++) await ask('m');
    expect(stack.gateway.health.circuitState('dep-a')).toBe('open');
    const before = A().requests.length;
    const { response } = await ask('m');
    expect(response.headers.get('x-gantry-provider')).toBe('dep-b');
    expect(response.headers.get('x-gantry-attempts')).toBeNull();
    expect(A().requests.length).toBe(before);

    A().reset();
    let servedBy: string | null = null;
    for (let i = 0; i < 60 && servedBy !== 'dep-a'; i++) {
      servedBy = (await ask('m')).response.headers.get('x-gantry-provider');
      if (servedBy !== 'dep-a') await new Promise((r) => setTimeout(r, 50));
    }
    expect(servedBy).toBe('dep-a');
    expect(stack.gateway.health.circuitState('dep-a')).toBe('closed');
  });
});
