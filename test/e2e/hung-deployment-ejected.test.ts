/**
 * A timeout counts against a deployment only when its own limit fired. A deployment that hangs
 * with `timeoutMs` below the request timeout is ejected and the healthy one behind it answers.
 * A healthy deployment whose correct answers take longer than the request allows (the caller's
 * long jobs, behind a `timeoutMs` above the request timeout) is not: counting those deadline
 * cuts let three such requests open its circuit, and everyone got 503.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEY = 'sk-test-hung-ejected';
const REQUEST_TIMEOUT_MS = 1_500;

const asker = (client: OpenAI) => (): Promise<number> =>
  client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }).then(
    () => 200,
    (e: unknown) => (e instanceof OpenAI.APIError ? (e.status ?? 0) : -1),
  );

describe('a deployment that hangs, its own limit below the request timeout', () => {
  let stack: Stack;
  let ask: () => Promise<number>;
  beforeAll(async () => {
    stack = await startStack(
      ([a, b]) =>
        [
          deployment({ name: 'hung', model: 'm', baseUrl: fakeBase(a!), priority: 1, timeoutMs: 500 }),
          deployment({ name: 'healthy', model: 'm', baseUrl: fakeBase(b!), priority: 2, timeoutMs: 1_000 }),
          tenant('acme'),
          apiKey('k', KEY, 'acme'),
        ].join(''),
      { fakes: 2, requestTimeoutMs: REQUEST_TIMEOUT_MS },
    );
    ask = asker(new OpenAI({ baseURL: stack.baseURL, apiKey: KEY, maxRetries: 0 }));
  });
  afterAll(() => stack.close());

  it('is ejected after the failure threshold, and the healthy one behind it answers', async () => {
    const [hung] = stack.fakes;
    expect(await ask()).toBe(200);
    hung!.setFaults([{ fault: { type: 'hang' } }]);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push(await ask());
    // Each hang ends at its own 500 ms limit, leaving the healthy deployment time to answer (a
    // loaded machine may still run out of the request's time: 504).
    expect(statuses.slice(0, 3).every((s) => s === 200 || s === 504)).toBe(true);
    expect(statuses.slice(3)).toEqual([200, 200, 200]);
    expect(stack.gateway.health.circuitState('hung')).toBe('open');
    // The warm-up and at most the three hangs: never asked again once ejected.
    expect(hung!.requests.length).toBeLessThanOrEqual(4);
  });
});

describe('a healthy deployment whose answers take longer than the request allows', () => {
  let stack: Stack;
  let ask: () => Promise<number>;
  const warnings: string[] = [];
  beforeAll(async () => {
    stack = await startStack(
      ([a]) =>
        [
          deployment({ name: 'solo', model: 'm', baseUrl: fakeBase(a!), priority: 1, timeoutMs: 5_000 }),
          tenant('acme'),
          apiKey('k', KEY, 'acme'),
        ].join(''),
      {
        fakes: 1,
        requestTimeoutMs: REQUEST_TIMEOUT_MS,
        logger: { level: 'warn', stream: { write: (line: string) => void warnings.push(line) } },
      },
    );
    ask = asker(new OpenAI({ baseURL: stack.baseURL, apiKey: KEY, maxRetries: 0 }));
  });
  afterAll(() => stack.close());

  it('is warned of at load: its hangs cannot count against it', () => {
    const solo = warnings.filter((w) => w.includes('ModelDeployment solo'));
    expect(solo).toHaveLength(1);
    expect(solo[0]).toContain('timeoutMs 5000');
    expect(solo[0]).toContain(`${REQUEST_TIMEOUT_MS} ms`);
    expect(solo[0]).toContain('its hangs cannot count against it');
  });

  it('is not ejected by answers cut by the request deadline', async () => {
    const [fake] = stack.fakes;
    expect(await ask()).toBe(200);
    fake!.setFaults([{ times: 3, fault: { type: 'delay', ms: 2_000 } }]);
    expect([await ask(), await ask(), await ask()]).toEqual([504, 504, 504]);
    expect(stack.gateway.health.circuitState('solo')).toBe('closed');
    expect([await ask(), await ask()]).toEqual([200, 200]);
  });
});
