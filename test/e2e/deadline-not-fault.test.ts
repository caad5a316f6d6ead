/**
 * An attempt cut by the request's own deadline says nothing about the deployment: the
 * request's time also goes on its upload (a client may trickle it), on earlier stages and on
 * earlier attempts. Here a first deployment hangs until its own 700 ms limit (a real fault),
 * which leaves the second, healthy one (it answers in 500 ms, within its own 5 s) only the
 * ~300 ms left of the 1 s request budget. Counted against the second, three such requests
 * ejected both deployments, and the model answered 503 to everyone.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEY = 'sk-test-deadline';
const REQUEST_BUDGET_MS = 1_000;
let stack: Stack;
let client: OpenAI;

beforeAll(async () => {
  stack = await startStack(
    ([a, b]) =>
      [
        deployment({ name: 'hung', model: 'm', baseUrl: fakeBase(a!), priority: 1, timeoutMs: 700 }),
        deployment({ name: 'healthy', model: 'm', baseUrl: fakeBase(b!), priority: 2, timeoutMs: 5_000 }),
        tenant('acme'),
        apiKey('k', KEY, 'acme'),
      ].join(''),
    { fakes: 2, requestTimeoutMs: REQUEST_BUDGET_MS },
  );
  client = new OpenAI({ baseURL: stack.baseURL, apiKey: KEY, maxRetries: 0 });
});
afterAll(() => stack.close());

const ask = () =>
  client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }).withResponse();

describe('the request deadline is not the deployment’s fault', () => {
  it('a healthy deployment cut short by the request budget keeps its circuit closed', async () => {
    const [hung, healthy] = stack.fakes;
    hung!.setFaults([{ fault: { type: 'hang' } }]);
    healthy!.setFaults([{ fault: { type: 'delay', ms: 500 } }]);
    for (let i = 0; i < 3; i++) {
      const err = (await ask().catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
      expect(err.status).toBe(504);
      expect(err.headers?.get('x-gantry-failed')).toBe('hung,healthy');
    }
    expect(healthy!.requests).toHaveLength(3);
    // The hung deployment's own limit fired three times: that one is ejected, rightly.
    expect(stack.gateway.health.circuitState('hung')).toBe('open');
    expect(stack.gateway.health.circuitState('healthy')).toBe('closed');

    healthy!.reset();
    const { response } = await ask();
    expect(response.headers.get('x-gantry-provider')).toBe('healthy');
  });
});
