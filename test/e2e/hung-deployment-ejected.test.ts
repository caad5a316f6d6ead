/**
 * A deployment whose own limit is at least the request's budget (a reasoning model given
 * 300 s behind the 120 s request timeout; 5 s behind 1.5 s here) and that hangs on every call
 * ends each attempt at the request's deadline, having had the whole budget. Released as "cut
 * by the deadline", it was never ejected: every request answered 504 and the healthy
 * deployment behind it was never tried.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEY = 'sk-test-hung-ejected';
let stack: Stack;
let client: OpenAI;

beforeAll(async () => {
  stack = await startStack(
    ([a, b]) =>
      [
        deployment({ name: 'hung', model: 'm', baseUrl: fakeBase(a!), priority: 1, timeoutMs: 5_000 }),
        deployment({ name: 'healthy', model: 'm', baseUrl: fakeBase(b!), priority: 2, timeoutMs: 5_000 }),
        tenant('acme'),
        apiKey('k', KEY, 'acme'),
      ].join(''),
    { fakes: 2, requestTimeoutMs: 1_500 },
  );
  client = new OpenAI({ baseURL: stack.baseURL, apiKey: KEY, maxRetries: 0 });
});
afterAll(() => stack.close());

const ask = (): Promise<number> =>
  client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }).then(
    () => 200,
    (e: unknown) => (e instanceof OpenAI.APIError ? (e.status ?? 0) : -1),
  );

describe('a deployment that hangs through the whole request budget', () => {
  it('is ejected after the failure threshold, and the healthy one behind it answers', async () => {
    const [hung] = stack.fakes;
    // Warm: a cold process may spend over a tenth of the budget before routing, which is the
    // share an attempt may miss and still be the deployment's.
    expect(await ask()).toBe(200);
    hung!.setFaults([{ fault: { type: 'hang' } }]);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push(await ask());
    // Three hangs eject it (each a 504, or a 200 when a loaded machine left the healthy one
    // time to answer); from then on the healthy deployment answers at once.
    expect(statuses.slice(0, 3).every((s) => s === 504 || s === 200)).toBe(true);
    expect(statuses.slice(3)).toEqual([200, 200, 200]);
    expect(stack.gateway.health.circuitState('hung')).toBe('open');
    // The warm-up and at most the three hangs: never asked again once ejected.
    expect(hung!.requests.length).toBeLessThanOrEqual(4);
  });
});
