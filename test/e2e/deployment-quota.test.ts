/**
 * ModelDeployment rpm/tpm, the provider's quota per deployment, over real HTTP with the openai
 * SDK: a full window sends the request to the next candidate with no health effect; every
 * window full is a 429 naming the provider quota with Retry-After; tpm counts the request's
 * estimate; two pods on one Redis share the window. Time is the gateways' injected clock.
 */
import { randomUUID } from 'node:crypto';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../../dataplane/src/gateway.ts';
import { testRedisUrl } from '../harness/redis.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEY = 'sk-test-deployment-quota';

function manifests([a, b, c]: string[]): string {
  return [
    deployment({ name: 'dep-a', model: 'm', baseUrl: fakeBase(a!), priority: 1, extra: { rpm: 2 } }),
    deployment({ name: 'dep-b', model: 'm', baseUrl: fakeBase(b!), priority: 2 }),
    deployment({ name: 'full-1', model: 'full', baseUrl: fakeBase(c!), extra: { rpm: 1 } }),
    deployment({ name: 'full-2', model: 'full', baseUrl: fakeBase(c!), extra: { rpm: 1 } }),
    deployment({ name: 'tok-a', model: 'tok', baseUrl: fakeBase(a!), priority: 1, extra: { tpm: 1000 } }),
    deployment({ name: 'tok-b', model: 'tok', baseUrl: fakeBase(b!), priority: 2 }),
    tenant('acme'),
    apiKey('k', KEY, 'acme'),
  ].join('');
}

const ask = (client: OpenAI, model: string, maxTokens?: number) =>
  client.chat.completions
    .create({
      model,
      messages: [{ role: 'user', content: 'hello' }],
      ...(maxTokens !== undefined && { max_tokens: maxTokens }),
    })
    .withResponse();

async function quotaSkips(gateway: Gateway, name: string): Promise<number> {
  const metric = await gateway.metrics.deploymentQuotaSkips.get();
  return metric.values.find((v) => v.labels.deployment === name)?.value ?? 0;
}

describe('one pod, in-process windows', () => {
  let now = Date.UTC(2026, 0, 1);
  let stack: Stack;
  let client: OpenAI;
  const A = () => stack.fakes[0]!;
  const B = () => stack.fakes[1]!;

  beforeAll(async () => {
    stack = await startStack(manifests, { fakes: 3, clock: () => now });
    client = new OpenAI({ baseURL: stack.baseURL, apiKey: KEY, maxRetries: 0 });
  });
  afterAll(() => stack.close());
  beforeEach(() => {
    // A fresh minute for every test: the windows of the one before have slid out.
    now += 120_000;
    for (const f of stack.fakes) f.reset();
  });

  it('rpm 2: two requests reach dep-a, the third goes to dep-b; dep-a stays healthy', async () => {
    const served: (string | null)[] = [];
    for (let i = 0; i < 3; i++)
      served.push((await ask(client, 'm')).response.headers.get('x-gantry-provider'));
    expect(served).toEqual(['dep-a', 'dep-a', 'dep-b']);
    expect(A().requests).toHaveLength(2);
    expect(B().requests).toHaveLength(1);
    expect(await quotaSkips(stack.gateway, 'dep-a')).toBe(1);
    expect(stack.gateway.health.circuitState('dep-a')).toBe('closed');
    const third = await ask(client, 'm');
    // Still full (a skip is not a failure: no x-gantry-failed), and served by dep-b again.
    expect(third.response.headers.get('x-gantry-failed')).toBeNull();
    expect(third.response.headers.get('x-gantry-provider')).toBe('dep-b');
    // A minute after the first request, dep-a takes requests again.
    now += 60_000;
    expect((await ask(client, 'm')).response.headers.get('x-gantry-provider')).toBe('dep-a');
  });

  it('every deployment at its quota: 429 rate_limit_exceeded naming it, Retry-After the earliest reset', async () => {
    await ask(client, 'full');
    now += 10_000;
    await ask(client, 'full');
    now += 5_000;
    const err = await ask(client, 'full').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    const refused = err as InstanceType<typeof OpenAI.RateLimitError>;
    expect(refused.status).toBe(429);
    expect(refused.error).toMatchObject({ type: 'rate_limit_exceeded', code: 429 });
    expect(refused.message).toMatch(/every deployment of full is at its provider quota/);
    // The first request leaves its window 60 s after it was sent: 45 s from now.
    expect(refused.headers?.get('retry-after')).toBe('45');
    expect(stack.gateway.health.circuitState('full-1')).toBe('closed');
    expect(stack.gateway.health.circuitState('full-2')).toBe('closed');
  });

  it("tpm counts the request's estimate: one whose max_tokens does not fit goes to the next deployment", async () => {
    const small = await ask(client, 'tok', 100);
    expect(small.response.headers.get('x-gantry-provider')).toBe('tok-a');
    const big = await ask(client, 'tok', 1000);
    expect(big.response.headers.get('x-gantry-provider')).toBe('tok-b');
    expect(await quotaSkips(stack.gateway, 'tok-a')).toBe(1);
  });

  it('the estimate is corrected to the reported usage once answered', async () => {
    // ~ 600 + prompt each as estimated; the fake provider reports a few tokens.
    expect((await ask(client, 'tok', 600)).response.headers.get('x-gantry-provider')).toBe('tok-a');
    expect((await ask(client, 'tok', 600)).response.headers.get('x-gantry-provider')).toBe('tok-a');
  });
});

describe('two pods on one Redis', () => {
  let now = Date.UTC(2026, 0, 1);
  let podA: Stack;
  let podB: Gateway;
  const shared = () => ({ redisUrl: testRedisUrl(), redisPrefix: `dq-${randomUUID()}`, clock: () => now });

  beforeAll(async () => {
    const opts = shared();
    podA = await startStack(manifests, { fakes: 3, ...opts });
    podB = await startGateway({
      configFile: podA.configFile,
      env: { FAKE_PROVIDER_KEY: 'sk-fake' },
      watch: false,
      preStopMs: 0,
      drainTimeoutMs: 200,
      ...opts,
    });
  }, 60_000);
  afterAll(async () => {
    await podB?.close();
    await podA?.close();
  });

  it("share dep-a's window: pod A, pod B, then pod A again goes to dep-b", async () => {
    const a = new OpenAI({ baseURL: podA.baseURL, apiKey: KEY, maxRetries: 0 });
    const b = new OpenAI({ baseURL: `${podB.url}/v1`, apiKey: KEY, maxRetries: 0 });
    const served = [
      (await ask(a, 'm')).response.headers.get('x-gantry-provider'),
      (await ask(b, 'm')).response.headers.get('x-gantry-provider'),
      (await ask(a, 'm')).response.headers.get('x-gantry-provider'),
      (await ask(b, 'm')).response.headers.get('x-gantry-provider'),
    ];
    expect(served).toEqual(['dep-a', 'dep-a', 'dep-b', 'dep-b']);
    expect(podA.fakes[0]!.requests).toHaveLength(2);
    expect(podA.fakes[1]!.requests).toHaveLength(2);
    expect(podA.gateway.health.circuitState('dep-a')).toBe('closed');
    expect(podB.health.circuitState('dep-a')).toBe('closed');
    now += 60_000;
    expect((await ask(b, 'm')).response.headers.get('x-gantry-provider')).toBe('dep-a');
  });
});
