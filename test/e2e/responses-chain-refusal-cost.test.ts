/**
 * What refusing a chain too long to continue costs. The Responses store records each stored
 * conversation's size when it serialises it, so the refusal reads that size (the first bytes
 * of the entry), not the multi-megabyte conversation: before, an 80-byte request made the
 * gateway fetch and parse the whole stored record (30 ms of CPU for a 7 MB history), and it
 * was never rate-limited, since admission happens later, inside the model call. A refusal
 * now counts against the key's request rate like any request.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis, type RedisInstance } from '../harness/redis.ts';
import { longChain as chainOf, redisBytesSent } from '../harness/responses-chain.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEY = 'sk-test-chain-refusal-cost';
const LIMITED_KEY = 'sk-test-chain-refusal-limited';
const BODY_LIMIT = 1024 * 1024;
const REQUESTS_PER_MINUTE = 6;
/** ~700 KB of varied text: two turns are past the body limit. */
const big = (turn: number): string =>
  Array.from({ length: 70_000 }, (_, j) => `w${turn}x${j}`)
    .join(' ')
    .padEnd(700_000, '.');

let redis: RedisInstance;
let stack: Stack;
let watcher: Redis;

beforeAll(async () => {
  // A private server: its network counters see only this test's traffic.
  redis = await startRedis();
  stack = await startStack(
    ([url]) =>
      [
        deployment({ name: 'gpt-test', model: 'gpt-test', baseUrl: fakeBase(url!) }),
        tenant('acme'),
        apiKey('k', KEY, 'acme'),
        apiKey('limited', LIMITED_KEY, 'acme', { rateLimit: { requestsPerMinute: REQUESTS_PER_MINUTE } }),
      ].join(''),
    { bodyLimitBytes: BODY_LIMIT, redisUrl: redis.url, redisPrefix: `chain-${randomUUID()}` },
  );
  watcher = new Redis(redis.url);
}, 60_000);
afterAll(async () => {
  watcher?.disconnect();
  await stack?.close();
  await redis?.stop();
});

const clientFor = (key: string) =>
  new OpenAI({ baseURL: stack.baseURL, apiKey: key, maxRetries: 0, timeout: 60_000 });

/** Two big turns: a stored conversation past the body limit. */
const longChain = (key: string): Promise<string> => chainOf(clientFor(key), big);

const refusedStatus = (key: string, id: string) =>
  clientFor(key)
    .responses.create({ model: 'gpt-test', previous_response_id: id, input: 'x' })
    .then(
      () => 200,
      (e: InstanceType<typeof OpenAI.APIError>) => e.status,
    );

const netOutput = (): Promise<number> => redisBytesSent(watcher);

describe('refusing a chain too long to continue', () => {
  it('reads the recorded size, not the stored conversation', async () => {
    const id = await longChain(KEY);
    const before = await netOutput();
    expect(await refusedStatus(KEY, id)).toBe(400);
    const sent = (await netOutput()) - before;
    // Before: the whole ~1.4 MB record crossed from Redis to the gateway.
    expect(sent).toBeLessThan(16 * 1024);
  });

  it("counts against the key's request rate, so refusals cannot be sent faster than answers", async () => {
    const id = await longChain(LIMITED_KEY); // two requests of the minute
    const statuses: (number | undefined)[] = [];
    for (let i = 0; i < REQUESTS_PER_MINUTE - 1; i++) statuses.push(await refusedStatus(LIMITED_KEY, id));
    expect(statuses).toEqual([400, 400, 400, 400, 429]);
  });
});
