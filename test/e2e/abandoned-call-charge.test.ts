/**
 * A call its client abandons once it is upstream is charged its prompt (the provider bills
 * it), recorded as a 499, once: non-streamed calls and streams left before their first token,
 * at the price of the deployment that had it (never a failed attempt's before it). A client
 * that leaves before any attempt is on the wire is charged nothing. Over HTTP with the official
 * openai client and an AbortController, with in-process stores and with a real redis-server;
 * the fake provider holds each call (`hang`) until the test has aborted it, so every step waits
 * on an observed state, never a guessed time.
 */
import { randomUUID } from 'node:crypto';
import OpenAI, { APIUserAbortError } from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { UsageRecord } from '../../dataplane/src/accounting/usage.ts';
import { estimatePromptTokens } from '../../dataplane/src/accounting/tokens.ts';
import { DEFAULT_RETRY } from '../../dataplane/src/router/policy.ts';
import { testRedisUrl } from '../harness/redis.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';
import { until } from '../harness/until.ts';
import { usageToday } from '../harness/usage-record.ts';

const KEY = 'sk-test-abandoned-call';
const BUDGET = { limitUsd: 5, period: 'monthly' } as const;
const PRICE_A = { inputPerMillionTokens: 100, outputPerMillionTokens: 200 };
const PRICE_B = { inputPerMillionTokens: 300, outputPerMillionTokens: 600 };
const KEY_REF = { tenant: 'acme', keyId: 'default/k' };
const PROMPT = Array.from({ length: 40 }, (_, i) => `Invoice ${i} was paid on time by the customer.`).join(
  ' ',
);
const MESSAGES = [{ role: 'user' as const, content: PROMPT }];
/** The gateway's own count of the prompt: what an abandoned call is charged for. */
const PROMPT_TOKENS = estimatePromptTokens({ model: 'm', messages: MESSAGES });
const micros = (usd: number) => Math.round(usd * 1e6);

describe.each([
  ['in-process stores', false],
  ['Redis stores', true],
])('a call abandoned upstream, %s', (_name, redis) => {
  let stack: Stack;
  let client: OpenAI;
  const fake = (i: number) => stack.fakes[i]!;

  beforeAll(async () => {
    stack = await startStack(
      ([a, b]) =>
        [
          // `m` fails over from a to b; `solo` has one deployment, so it is retried after a backoff.
          deployment({ name: 'a', model: 'm', baseUrl: fakeBase(a!), pricing: PRICE_A, priority: 1 }),
          deployment({ name: 'b', model: 'm', baseUrl: fakeBase(b!), pricing: PRICE_B, priority: 2 }),
          deployment({ name: 'solo', model: 'solo', baseUrl: fakeBase(a!), pricing: PRICE_A }),
          tenant('acme'),
          apiKey('k', KEY, 'acme', { budget: BUDGET }),
        ].join(''),
      {
        fakes: 2,
        // A backoff no test outlives: a client that leaves during it is seen leaving there.
        retry: { ...DEFAULT_RETRY, backoffBaseMs: 30_000, backoffMaxMs: 30_000 },
        ...(redis && { redisUrl: testRedisUrl(), redisPrefix: `abandoned-${randomUUID()}` }),
      },
    );
    client = new OpenAI({ baseURL: stack.baseURL, apiKey: KEY, maxRetries: 0 });
  });
  afterAll(() => stack.close());
  beforeEach(() => {
    fake(0).reset();
    fake(1).reset();
    stack.gateway.health.reset();
  });

  const budget = () => stack.gateway.stores.budgets.state(KEY_REF, BUDGET);
  const records = () => usageToday(stack, 'acme');

  /** Starts a call, aborts it once `ready` holds, and returns the one record it left. */
  async function abandon(
    opts: { model?: string; stream?: boolean },
    ready: () => Promise<boolean>,
  ): Promise<{ record: UsageRecord; spentBefore: number }> {
    const spentBefore = (await budget()).spentUsd;
    const before = new Set((await records()).map((r) => r.id));
    const abort = new AbortController();
    const call = client.chat.completions
      .create(
        { model: opts.model ?? 'm', messages: MESSAGES, max_tokens: 30, stream: opts.stream ?? false },
        { signal: abort.signal },
      )
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    await until('the call to reach its step', async () => ((await ready()) ? true : undefined));
    abort.abort();
    expect(await call).toBeInstanceOf(APIUserAbortError);
    const added = await until('its usage record', async () => {
      const fresh = (await records()).filter((r) => !before.has(r.id));
      return fresh.length > 0 ? fresh : undefined;
    });
    expect(added).toHaveLength(1);
    // The hold is settled once: spend moved by exactly the record's cost, and nothing is held.
    await until('the settlement', async () => {
      const state = await budget();
      return micros(state.spentUsd - spentBefore) === micros(added[0]!.costUsd) && state.heldUsd === 0
        ? true
        : undefined;
    });
    return { record: added[0]!, spentBefore };
  }

  const upstreamHas = (i: number, n: number) => async () => fake(i).requests.length >= n;

  it('a non-streamed call left while upstream is charged its prompt at that deployment, as a 499', async () => {
    fake(0).setFaults([{ fault: { type: 'hang' }, times: 1 }]);
    const cut = fake(0).abandoned;
    const { record } = await abandon({}, upstreamHas(0, 1));
    expect(record).toMatchObject({
      status: 499,
      errorType: 'client_closed_request',
      stream: false,
      deployment: 'a',
      attempts: 1,
      promptTokens: PROMPT_TOKENS,
      completionTokens: 0,
    });
    expect(PROMPT_TOKENS).toBeGreaterThan(300);
    expect(micros(record.costUsd)).toBe(micros((PROMPT_TOKENS * PRICE_A.inputPerMillionTokens) / 1e6));
    // The upstream call itself was cut too (the gateway does not read an answer nobody wants).
    await until('the upstream exchange closed', async () => (fake(0).abandoned > cut ? true : undefined));
  });

  it('a stream left before its first token is charged the same way', async () => {
    fake(0).setFaults([{ match: { stream: true }, fault: { type: 'hang' }, times: 1 }]);
    const { record } = await abandon({ stream: true }, upstreamHas(0, 1));
    expect(record).toMatchObject({
      status: 499,
      stream: true,
      deployment: 'a',
      promptTokens: PROMPT_TOKENS,
      completionTokens: 0,
    });
    expect(micros(record.costUsd)).toBe(micros((PROMPT_TOKENS * PRICE_A.inputPerMillionTokens) / 1e6));
  });

  it('after a failover, only the attempt on the wire is charged, at its own price', async () => {
    fake(0).setFaults([{ fault: { type: 'status', status: 500 }, times: 1 }]);
    fake(1).setFaults([{ fault: { type: 'hang' }, times: 1 }]);
    const { record } = await abandon({}, upstreamHas(1, 1));
    expect(fake(0).requests).toHaveLength(1);
    expect(record).toMatchObject({ status: 499, deployment: 'b', attempts: 2, promptTokens: PROMPT_TOKENS });
    expect(micros(record.costUsd)).toBe(micros((PROMPT_TOKENS * PRICE_B.inputPerMillionTokens) / 1e6));
  });

  it('a client that leaves between attempts (no call on the wire) is charged nothing', async () => {
    fake(0).setFaults([{ fault: { type: 'status', status: 500 }, times: 1 }]);
    // The failed attempt is counted just before the router starts its backoff.
    const failed =
      /^gantry_upstream_attempts_total\{[^}]*deployment="solo"[^}]*outcome="server"[^}]*\} (\d+)/m;
    const failures = async () =>
      Number(failed.exec(await (await fetch(`${stack.gateway.adminUrl}/metrics`)).text())?.[1] ?? 0);
    const seen = await failures();
    const { record, spentBefore } = await abandon({ model: 'solo' }, async () => (await failures()) > seen);
    expect(fake(0).requests).toHaveLength(1);
    expect(record).toMatchObject({ status: 499, costUsd: 0, promptTokens: 0 });
    expect((await budget()).spentUsd).toBe(spentBefore);
  });

  it('a call that is answered is charged as answered, once', async () => {
    const spentBefore = (await budget()).spentUsd;
    const before = new Set((await records()).map((r) => r.id));
    await client.chat.completions.create({ model: 'm', messages: MESSAGES, max_tokens: 30 });
    const added = await until('its usage record', async () => {
      const fresh = (await records()).filter((r) => !before.has(r.id));
      return fresh.length > 0 ? fresh : undefined;
    });
    expect(added.map((r) => r.status)).toEqual([200]);
    await until('the settlement', async () =>
      micros((await budget()).spentUsd - spentBefore) === micros(added[0]!.costUsd) ? true : undefined,
    );
  });
});
