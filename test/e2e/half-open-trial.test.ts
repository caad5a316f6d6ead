/**
 * A half-open circuit lets one trial through at a time. A call admitted before the circuit
 * opened that then ends without a verdict (its client left) must not end the trial in flight:
 * it used to, and each such call let one more request onto the deployment being tested.
 * The breaker runs on a clock the test moves, so the open period passes without waiting.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';
import { until } from '../harness/until.ts';
import { usageToday } from '../harness/usage-record.ts';

const KEY = 'sk-test-half-open';
let stack: Stack;
let client: OpenAI;
let clock = Date.now();

beforeAll(async () => {
  stack = await startStack(
    ([a, b]) =>
      [
        deployment({ name: 'tested', model: 'm', baseUrl: fakeBase(a!), priority: 1 }),
        deployment({ name: 'spare', model: 'm', baseUrl: fakeBase(b!), priority: 2 }),
        tenant('acme'),
        apiKey('k', KEY, 'acme'),
      ].join(''),
    {
      fakes: 2,
      breaker: { failureThreshold: 1, baseOpenMs: 5_000, maxOpenMs: 60_000 },
      clock: () => clock,
    },
  );
  client = new OpenAI({ baseURL: stack.baseURL, apiKey: KEY, maxRetries: 0 });
});
afterAll(() => stack.close());

const ask = (signal?: AbortSignal) =>
  client.chat.completions
    .create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }, signal && { signal })
    .withResponse();

describe('half-open: one trial at a time', () => {
  it('a stale call that ends without a verdict does not let a second trial through', async () => {
    const tested = stack.fakes[0]!;
    tested.setFaults([
      { fault: { type: 'hang' }, times: 1 }, // the stale call, admitted while closed
      { fault: { type: 'status', status: 500 }, times: 1 }, // opens the circuit
      { fault: { type: 'hang' }, times: 1 }, // the trial, still out
    ]);
    const stale = new AbortController();
    const staleCall = ask(stale.signal).catch((e: unknown) => e);
    await until('the stale call upstream', async () => (tested.requests.length === 1 ? true : undefined));

    const opened = await ask();
    expect(opened.response.headers.get('x-gantry-provider')).toBe('spare');
    expect(stack.gateway.health.circuitState('tested')).toBe('open');

    clock += 10_000; // past the open period
    const trial = new AbortController();
    const trialCall = ask(trial.signal).catch((e: unknown) => e);
    await until('the trial upstream', async () => (tested.requests.length === 3 ? true : undefined));
    expect(stack.gateway.health.circuitState('tested')).toBe('half-open');

    stale.abort();
    await staleCall;
    await until('the stale call settled as gone', async () =>
      (await usageToday(stack, 'acme')).some((r) => r.status === 499) ? true : undefined,
    );

    // The trial is still out: the next request goes to the spare, not onto the tested deployment.
    const next = await ask();
    expect(next.response.headers.get('x-gantry-provider')).toBe('spare');
    expect(tested.requests).toHaveLength(3);
    expect(stack.gateway.health.circuitState('tested')).toBe('half-open');

    trial.abort();
    await trialCall;
  });
});
