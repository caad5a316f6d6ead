/**
 * Failover that recovers (issue 10, points 1–3), through a real gateway in front of fake
 * providers: an ejected primary is tried on a bounded schedule and gets traffic back soon
 * after it heals; the manifest's retry policy decides same-deployment retries; a stream
 * whose upstream never answers fails over at the first-token limit.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fakeAnswer } from '../../dataplane/src/fake-provider/index.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEY = 'sk-test-recovery';

const ask = (client: OpenAI, model: string) =>
  client.chat.completions.create({ model, messages: [{ role: 'user', content: 'recover' }] }).withResponse();

/**
 * The breaker runs on a clock the test moves, so a minute of failure and the recovery after
 * it replay in milliseconds: one request every `stepMs` of breaker time, as steady traffic.
 */
describe('recovery of an ejected primary', () => {
  let stack: Stack;
  let client: OpenAI;
  let clock = 0;
  const A = () => stack.fakes[0]!;

  beforeAll(async () => {
    stack = await startStack(
      ([a, b]) =>
        [
          // Shipped breaker defaults: no circuitBreaker block.
          deployment({ name: 'primary', model: 'm', baseUrl: fakeBase(a!), priority: 1 }),
          deployment({ name: 'secondary', model: 'm', baseUrl: fakeBase(b!), priority: 2 }),
          // The manifest's own breaker: one fault opens it, trials at most 2 s apart.
          deployment({
            name: 'tuned',
            model: 'tuned',
            baseUrl: fakeBase(a!),
            priority: 1,
            extra: { circuitBreaker: { failureThreshold: 1, openMs: 500, maxOpenMs: 2_000 } },
          }),
          deployment({ name: 'tuned-backup', model: 'tuned', baseUrl: fakeBase(b!), priority: 2 }),
          tenant('acme'),
          apiKey('k', KEY, 'acme'),
        ].join(''),
      { fakes: 2, clock: () => clock },
    );
    client = new OpenAI({ baseURL: stack.baseURL, apiKey: KEY, maxRetries: 0 });
  });
  afterAll(() => stack.close());
  beforeEach(() => {
    for (const f of stack.fakes) f.reset();
    stack.gateway.health.reset();
    clock = 1_000_000;
  });

  /**
   * Fails the primary for `failForMs`, then heals it; traffic continues every `stepMs`.
   * Returns the breaker times at which the primary was tried while failing, and how long
   * after healing it served again.
   */
  async function flapThenRecover(model: string, primary: string, failForMs: number, stepMs: number) {
    A().setFaults([{ match: { model }, fault: { type: 'status', status: 500 } }]);
    const start = clock;
    const trials: number[] = [];
    while (clock - start < failForMs) {
      const before = A().requests.length;
      const { response } = await ask(client, model);
      expect(response.status).toBe(200); // the backup serves every request meanwhile
      if (A().requests.length > before) trials.push(clock);
      clock += stepMs;
    }
    expect(stack.gateway.health.circuitState(primary)).toBe('open');
    A().setFaults([]);
    const healedAt = clock;
    let servedBy: string | null = null;
    while (servedBy !== primary && clock - healedAt <= 60_000) {
      servedBy = (await ask(client, model)).response.headers.get('x-gantry-provider');
      if (servedBy !== primary) clock += stepMs;
    }
    expect(servedBy).toBe(primary);
    return { trials, backAfterMs: clock - healedAt };
  }

  const gaps = (times: number[]) => times.slice(1).map((t, i) => t - times[i]!);

  it('defaults: after a minute of failure the primary serves again within 15 s of recovering', async () => {
    const { trials, backAfterMs } = await flapThenRecover('m', 'primary', 60_000, 250);
    // Three faults open it; then one trial per open period: never more than 10 s apart.
    expect(trials.length).toBeGreaterThanOrEqual(3 + 5);
    expect(Math.max(...gaps(trials))).toBeLessThanOrEqual(10_000 + 250);
    expect(backAfterMs).toBeLessThanOrEqual(10_000);
    expect(stack.gateway.health.circuitState('primary')).toBe('closed');
  });

  it('the manifest circuitBreaker sets the threshold and the bound between trials', async () => {
    const { trials, backAfterMs } = await flapThenRecover('tuned', 'tuned', 20_000, 100);
    // failureThreshold 1: the first fault opened it; trials then come every 0.5, 1, 2, 2, ... s.
    expect(gaps(trials).slice(0, 3)).toEqual([500, 1_000, 2_000]);
    expect(Math.max(...gaps(trials))).toBe(2_000);
    expect(backAfterMs).toBeLessThanOrEqual(2_000);
  });
});

describe('same-deployment retries from the manifest', () => {
  let stack: Stack;
  let client: OpenAI;
  const A = () => stack.fakes[0]!;
  const B = () => stack.fakes[1]!;

  beforeAll(async () => {
    stack = await startStack(
      ([a, b]) =>
        [
          deployment({
            name: 'retrying',
            model: 'r',
            baseUrl: fakeBase(a!),
            priority: 1,
            extra: {
              retry: { attempts: 3, backoffMs: 10, maxBackoffMs: 200, retryOnStatus: [429, 502, 503] },
              // Retries must not open the circuit between two tests.
              circuitBreaker: { failureThreshold: 10 },
            },
          }),
          deployment({ name: 'other', model: 'r', baseUrl: fakeBase(b!), priority: 2 }),
          deployment({ name: 'no-policy', model: 'n', baseUrl: fakeBase(a!), priority: 1 }),
          deployment({ name: 'no-policy-backup', model: 'n', baseUrl: fakeBase(b!), priority: 2 }),
          tenant('acme'),
          apiKey('k', KEY, 'acme'),
        ].join(''),
      { fakes: 2 },
    );
    client = new OpenAI({ baseURL: stack.baseURL, apiKey: KEY, maxRetries: 0 });
  });
  afterAll(() => stack.close());
  beforeEach(() => {
    for (const f of stack.fakes) f.reset();
    stack.gateway.health.reset();
  });

  it('a transient 503 is retried on the same deployment, which then serves', async () => {
    A().setFaults([{ fault: { type: 'status', status: 503 }, times: 2 }]);
    const { data, response } = await ask(client, 'r');
    expect(data.choices[0]?.message.content).toBe(fakeAnswer('recover'));
    expect(response.headers.get('x-gantry-provider')).toBe('retrying');
    expect(response.headers.get('x-gantry-attempts')).toBe('3');
    expect(A().requests).toHaveLength(3);
    expect(B().requests).toHaveLength(0);
  });

  it('after its attempts are spent the request fails over', async () => {
    A().setFaults([{ fault: { type: 'status', status: 502 } }]);
    const { response } = await ask(client, 'r');
    expect(response.headers.get('x-gantry-provider')).toBe('other');
    expect(response.headers.get('x-gantry-attempts')).toBe('4');
    expect(A().requests).toHaveLength(3);
    expect(B().requests).toHaveLength(1);
  });

  it('a connection reset is retried (retryOnConnectionError defaults to true)', async () => {
    A().setFaults([{ fault: { type: 'reset' }, times: 1 }]);
    const { response } = await ask(client, 'r');
    expect(response.headers.get('x-gantry-provider')).toBe('retrying');
    expect(A().requests).toHaveLength(2);
  });

  it('a status the policy does not list fails over at once', async () => {
    A().setFaults([{ fault: { type: 'status', status: 500 }, times: 1 }]);
    const { response } = await ask(client, 'r');
    expect(response.headers.get('x-gantry-provider')).toBe('other');
    expect(A().requests).toHaveLength(1);
  });

  it('a 429 with a short Retry-After is waited out; a long one fails over', async () => {
    A().setFaults([{ fault: { type: 'status', status: 429, retryAfterSeconds: 1 }, times: 1 }]);
    const { response } = await ask(client, 'r');
    // 1 s is longer than maxBackoffMs (200 ms): not "short", so another deployment serves.
    expect(response.headers.get('x-gantry-provider')).toBe('other');
    expect(A().requests).toHaveLength(1);
  });

  it('a 429 without Retry-After is retried with backoff', async () => {
    A().setFaults([{ fault: { type: 'status', status: 429 }, times: 1 }]);
    const { response } = await ask(client, 'r');
    expect(response.headers.get('x-gantry-provider')).toBe('retrying');
    expect(A().requests).toHaveLength(2);
  });

  it('without a retry block a deployment is failed over at once', async () => {
    A().setFaults([{ fault: { type: 'status', status: 503 }, times: 1 }]);
    const { response } = await ask(client, 'n');
    expect(response.headers.get('x-gantry-provider')).toBe('no-policy-backup');
    expect(A().requests).toHaveLength(1);
  });
});

describe('first-token limit', () => {
  let stack: Stack;
  const A = () => stack.fakes[0]!;
  const FIRST_TOKEN_MS = 300;
  const ATTEMPT_TIMEOUT_MS = 8_000;

  beforeAll(async () => {
    stack = await startStack(
      ([a, b]) =>
        [
          deployment({
            name: 'silent',
            model: 's',
            baseUrl: fakeBase(a!),
            priority: 1,
            timeoutMs: ATTEMPT_TIMEOUT_MS,
            firstTokenTimeoutMs: FIRST_TOKEN_MS,
          }),
          deployment({ name: 'speaks', model: 's', baseUrl: fakeBase(b!), priority: 2 }),
          tenant('acme'),
          apiKey('k', KEY, 'acme'),
        ].join(''),
      { fakes: 2 },
    );
  });
  afterAll(() => stack.close());

  it('an upstream that never sends headers is failed over at the first-token limit', async () => {
    A().setFaults([{ fault: { type: 'hang' }, times: 1 }]);
    const abandoned = A().whenAbandoned();
    const started = performance.now();
    const res = await fetch(`${stack.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 's', stream: true, messages: [{ role: 'user', content: 'hello' }] }),
    });
    const elapsed = performance.now() - started;
    const body = await res.text();
    expect(res.status).toBe(200);
    expect(res.headers.get('x-gantry-provider')).toBe('speaks');
    expect(res.headers.get('x-gantry-failed')).toBe('silent');
    expect(body).toContain('data: [DONE]');
    // Counted from the send: the wait is the first-token limit, not the attempt's timeout.
    expect(elapsed).toBeGreaterThanOrEqual(FIRST_TOKEN_MS - 5);
    expect(elapsed).toBeLessThan(ATTEMPT_TIMEOUT_MS / 4);
    await abandoned; // the hung upstream call was closed, not left open
  });
});
