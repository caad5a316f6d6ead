/**
 * The Responses routes that read stored data without calling a model: a token count over a
 * stored chain (POST /v1/responses/input_tokens), GET /v1/responses/{id} and its input_items,
 * and a refused /v1/interactions chain. Each counts against the key's request rate like any
 * request (before: all were free, so a 6-a-minute key could pull a megabyte-sized record
 * from Redis as often as it liked), and the token count bounds the stored chain as creating
 * a turn does, reading only the record's size when it is past the body limit. DELETE
 * /v1/responses/{id} and GET/DELETE /v1/interactions/{id} count the same way (they were free).
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis, type RedisInstance } from '../harness/redis.ts';
import { longChain as chainOf, redisBytesSent } from '../harness/responses-chain.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEY = 'sk-test-read-admission';
const LIMITED_KEY = 'sk-test-read-admission-limited';
const INTERACTIONS_KEY = 'sk-test-read-admission-interactions';
const SPENT_KEY = 'sk-test-read-admission-spent';
/** One limited key per route, so each route's count starts at zero. */
const ROUTE_KEYS = {
  responseDelete: 'sk-test-read-admission-response-delete',
  interactionGet: 'sk-test-read-admission-interaction-get',
  interactionDelete: 'sk-test-read-admission-interaction-delete',
};
const SPENT_BUDGET = { limitUsd: 1, period: 'monthly' as const };
const BODY_LIMIT = 64 * 1024;
const REQUESTS_PER_MINUTE = 6;
/** ~40 KB: two turns are past the body limit. */
const big = (turn: number): string => `turn ${turn} `.padEnd(40_000, 'abcdefgh');

let redis: RedisInstance;
let stack: Stack;
let watcher: Redis;

beforeAll(async () => {
  // A private server: its network counters see only this test's traffic.
  redis = await startRedis();
  const limited = { rateLimit: { requestsPerMinute: REQUESTS_PER_MINUTE } };
  stack = await startStack(
    ([url]) =>
      [
        deployment({ name: 'gpt-test', model: 'gpt-test', baseUrl: fakeBase(url!) }),
        tenant('acme'),
        apiKey('k', KEY, 'acme'),
        apiKey('limited', LIMITED_KEY, 'acme', limited),
        apiKey('interactions', INTERACTIONS_KEY, 'acme', limited),
        apiKey('spent', SPENT_KEY, 'acme', { budget: SPENT_BUDGET }),
        ...Object.entries(ROUTE_KEYS).map(([name, key]) => apiKey(name.toLowerCase(), key, 'acme', limited)),
      ].join(''),
    { bodyLimitBytes: BODY_LIMIT, redisUrl: redis.url, redisPrefix: `reads-${randomUUID()}` },
  );
  watcher = new Redis(redis.url);
}, 60_000);
afterAll(async () => {
  watcher?.disconnect();
  await stack?.close();
  await redis?.stop();
});

const clientFor = (key: string) => new OpenAI({ baseURL: stack.baseURL, apiKey: key, maxRetries: 0 });

/** Two big turns: a stored conversation past the body limit (two requests of the minute). */
const longChain = (key: string): Promise<string> => chainOf(clientFor(key), big);

const call = (key: string, path: string, body?: unknown, method = body === undefined ? 'GET' : 'POST') =>
  fetch(`${stack.baseURL}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body !== undefined && { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

const countTokens = (key: string, id: string) =>
  call(key, '/responses/input_tokens', { model: 'gpt-test', previous_response_id: id, input: 'x' });

const netOutput = (): Promise<number> => redisBytesSent(watcher);

describe('reading stored responses', () => {
  it('input_tokens refuses a chain past the body limit, reading only its recorded size', async () => {
    const id = await longChain(KEY);
    const before = await netOutput();
    const res = await countTokens(KEY, id);
    const sent = (await netOutput()) - before;
    expect(res.status).toBe(400);
    const { error } = (await res.json()) as { error: { param: string; message: string } };
    expect(error.param).toBe('previous_response_id');
    expect(error.message).toContain('/v1/responses/compact');
    // Before: the whole ~80 KB record crossed from Redis to the gateway, and was counted.
    expect(sent).toBeLessThan(16 * 1024);
  });

  it('GET /v1/responses/{id} reads the response alone, not the conversation stored with it', async () => {
    const id = await longChain(KEY);
    const before = await netOutput();
    const res = await call(KEY, `/responses/${id}`);
    const sent = (await netOutput()) - before;
    expect(res.status).toBe(200);
    expect(((await res.json()) as { id: string }).id).toBe(id);
    // Before: the whole ~80 KB record crossed from Redis and was parsed for its response.
    expect(sent).toBeLessThan(16 * 1024);
  });

  it("input_tokens, GET and input_items count against the key's request rate", async () => {
    const client = clientFor(LIMITED_KEY);
    const first = await client.responses.create({ model: 'gpt-test', input: 'hello' });
    const chain = await longChain(LIMITED_KEY); // three requests of the minute so far
    const reads = [
      await countTokens(LIMITED_KEY, first.id),
      await call(LIMITED_KEY, `/responses/${chain}`),
      await call(LIMITED_KEY, `/responses/${chain}/input_items`),
    ];
    expect(reads.map((r) => r.status)).toEqual([200, 200, 200]);
    // Each read told the client where it stands, as every admitted request does.
    expect(reads.map((r) => r.headers.get('x-ratelimit-remaining-requests'))).toEqual(['2', '1', '0']);
    const past = [
      await call(LIMITED_KEY, `/responses/${chain}`),
      await call(LIMITED_KEY, `/responses/${chain}/input_items`),
      await countTokens(LIMITED_KEY, chain),
      await call(LIMITED_KEY, '/responses/resp_unknown'),
    ];
    expect(past.map((r) => r.status)).toEqual([429, 429, 429, 429]);
  });
});

describe('a key whose budget is spent', () => {
  it('still reads what it stored: the response, its input items and a token count', async () => {
    const stored = await clientFor(SPENT_KEY).responses.create({ model: 'gpt-test', input: 'keep this' });
    await stack.gateway.stores.budgets.charge({
      tenant: 'acme',
      keyId: 'default/spent',
      budget: SPENT_BUDGET,
      amountUsd: SPENT_BUDGET.limitUsd,
      id: 'read-admission-spend-it-all',
    });
    // A new model call is refused: the budget really is spent.
    expect((await call(SPENT_KEY, '/responses', { model: 'gpt-test', input: 'more' })).status).toBe(402);
    for (const res of [
      await call(SPENT_KEY, `/responses/${stored.id}`),
      await call(SPENT_KEY, `/responses/${stored.id}/input_items`),
      await call(SPENT_KEY, '/responses/input_tokens', {
        model: 'gpt-test',
        previous_response_id: stored.id,
        input: 'x',
      }),
    ])
      expect(res.status, res.url).toBe(200);
  });
});

describe('refusing an interactions chain too long to continue', () => {
  it('reads only its recorded size', async () => {
    const create = async (input: string, previous?: string) => {
      const res = await call(KEY, '/interactions', {
        model: 'gpt-test',
        input,
        ...(previous ? { previous_interaction_id: previous } : {}),
      });
      return { status: res.status, id: ((await res.json()) as { id?: string }).id };
    };
    const first = await create(big(0));
    const second = await create(big(1), first.id);
    const before = await netOutput();
    const refused = await create('x', second.id);
    const sent = (await netOutput()) - before;
    expect(refused.status).toBe(400);
    // Before: the whole ~80 KB record crossed from Redis and was serialised again to be measured.
    expect(sent).toBeLessThan(16 * 1024);
  });

  it("counts against the key's request rate", async () => {
    const create = async (input: string, previous?: string) => {
      const res = await call(INTERACTIONS_KEY, '/interactions', {
        model: 'gpt-test',
        input,
        ...(previous ? { previous_interaction_id: previous } : {}),
      });
      return { status: res.status, id: ((await res.json()) as { id?: string }).id };
    };
    const first = await create(big(0));
    const second = await create(big(1), first.id);
    expect([first.status, second.status]).toEqual([200, 200]);
    const statuses: number[] = [];
    for (let i = 0; i < REQUESTS_PER_MINUTE - 1; i++) statuses.push((await create('x', second.id)).status);
    expect(statuses).toEqual([400, 400, 400, 400, 429]);
  });
});

describe('deleting a stored response, reading or deleting a stored interaction', () => {
  /** A stored object made with `key` (one request of its minute), and its id. */
  const makeResponse = async (key: string) =>
    (await clientFor(key).responses.create({ model: 'gpt-test', input: 'keep' })).id;
  const makeInteraction = async (key: string) => {
    const res = await call(key, '/interactions', { model: 'gpt-test', input: 'keep' });
    return ((await res.json()) as { id: string }).id;
  };

  it.each([
    {
      route: 'DELETE /v1/responses/{id}',
      key: ROUTE_KEYS.responseDelete,
      make: makeResponse,
      send: (key: string, id: string) => call(key, `/responses/${id}`, undefined, 'DELETE'),
      unknown: 'resp_unknown',
    },
    {
      route: 'GET /v1/interactions/{id}',
      key: ROUTE_KEYS.interactionGet,
      make: makeInteraction,
      send: (key: string, id: string) => call(key, `/interactions/${id}`),
      unknown: 'int_unknown',
    },
    {
      route: 'DELETE /v1/interactions/{id}',
      key: ROUTE_KEYS.interactionDelete,
      make: makeInteraction,
      send: (key: string, id: string) => call(key, `/interactions/${id}`, undefined, 'DELETE'),
      unknown: 'int_unknown',
    },
  ])(
    "$route counts against the key's request rate, an unknown id too",
    async ({ key, make, send, unknown }) => {
      const id = await make(key);
      // The rest of the minute: the stored object once, then unknown ids (404s count as well).
      const within = [await send(key, id)];
      for (let i = 2; i < REQUESTS_PER_MINUTE; i++) within.push(await send(key, unknown));
      expect(within.map((r) => r.status)).toEqual([200, 404, 404, 404, 404]);
      // The answered one told the client where it stands, as every admitted request does.
      expect(within[0]!.headers.get('x-ratelimit-remaining-requests')).toBe('4');
      const past = await send(key, id);
      expect(past.status).toBe(429);
      expect(((await past.json()) as { error: { type: string } }).error.type).toBe('rate_limit_exceeded');
    },
  );
});
