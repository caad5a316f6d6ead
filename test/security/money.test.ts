/**
 * Money attacks of issue 9 against a real gateway on a private, real redis-server:
 * output multipliers (`n`, `best_of`, prompt batches) cannot spend past a budget; absurd
 * token counts are a 400 naming the field, never a 5xx; spend made while Redis is down
 * reaches the budget exactly once after it returns, also across a gateway restart; legacy
 * completion streams are recorded and charged by how they really ended.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeProvider, type FakeProvider } from '../../dataplane/src/fake-provider/index.ts';
import { startGateway, type Gateway } from '../../dataplane/src/gateway.ts';
import { apiKey, deployment, fakeBase, tenant } from '../harness/stack.ts';
import { startRedis, type RedisInstance } from '../harness/redis.ts';
import { startGatedUpstream, type GatedUpstream } from '../harness/gated-upstream.ts';

const PRICE = { inputPerMillionTokens: 100, outputPerMillionTokens: 200 };
const CENT = 'sk-sec-cent';
const BUDGET = 'sk-sec-budget';
const RATE = 'sk-sec-rate';
const FREE = 'sk-sec-free';
const CACHED = 'sk-sec-cached';
const CENT_LIMIT = { limitUsd: 0.01, period: 'monthly' } as const;
const BUDGET_LIMIT = { limitUsd: 5, period: 'monthly' } as const;
const keyRef = (name: string) => ({ tenant: 'acme', keyId: `default/${name}` });

/** Fixed usage from the gated upstream: 10 prompt + 20 completion tokens = $0.005 at PRICE. */
const GATED_COST = (10 * 100 + 20 * 200) / 1e6;

function config(fakeUrl: string, gatedUrl: string): string {
  return [
    deployment({ name: 'm', model: 'm', baseUrl: fakeBase(fakeUrl), pricing: PRICE }),
    deployment({ name: 'w', model: 'w', baseUrl: fakeBase(fakeUrl), pricing: PRICE, contextWindow: 1000 }),
    deployment({
      name: 'legacy',
      model: 'legacy',
      baseUrl: fakeBase(fakeUrl),
      pricing: PRICE,
      capabilities: ['completions', 'streaming'],
    }),
    deployment({
      name: 'emb',
      model: 'emb',
      baseUrl: fakeBase(fakeUrl),
      pricing: PRICE,
      capabilities: ['embeddings'],
    }),
    deployment({ name: 'g', model: 'g', baseUrl: gatedUrl, pricing: PRICE }),
    tenant('acme'),
    apiKey('cent', CENT, 'acme', { budget: CENT_LIMIT }),
    apiKey('budget', BUDGET, 'acme', { budget: BUDGET_LIMIT }),
    apiKey('rate', RATE, 'acme', { rateLimit: { requestsPerMinute: 1000, tokensPerMinute: 100_000 } }),
    apiKey('free', FREE, 'acme'),
    tenant('cached', ['*'], { cache: { enabled: true } }),
    apiKey('cached', CACHED, 'cached'),
  ].join('');
}

let redis: RedisInstance;
let fake: FakeProvider;
let gated: GatedUpstream;
let dir: string;
let configFile: string;
let journalDir: string;
let gateway: Gateway;

const boot = () =>
  startGateway({
    configFile,
    env: { FAKE_PROVIDER_KEY: 'k' },
    watch: false,
    redisUrl: redis.url,
    redisPrefix: 'sec-money',
    drainTimeoutMs: 200,
    journalDir,
    // Replays also follow Redis' reconnect event; the timer is the backstop.
    journalRetryMs: 100,
  });

beforeAll(async () => {
  [redis, fake, gated] = await Promise.all([startRedis(), startFakeProvider(), startGatedUpstream()]);
  dir = await mkdtemp(join(tmpdir(), 'gantry-sec-money-'));
  configFile = join(dir, 'gantry.yaml');
  journalDir = join(dir, 'journal');
  await writeFile(configFile, config(fake.url, gated.url));
  gateway = await boot();
});
afterAll(async () => {
  await gateway.close();
  await Promise.all([fake.close(), gated.close(), redis.stop()]);
  await rm(dir, { recursive: true, force: true });
});

interface ErrorBody {
  error: { message: string; type: string; code: number; param?: string };
}

async function post(
  path: string,
  key: string,
  body: unknown,
): Promise<{ status: number; body: unknown; headers: Headers }> {
  const res = await fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      'anthropic-version': '2023-06-01',
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text) as unknown, headers: res.headers };
}

const chat = (extra: Record<string, unknown>, model = 'm') => ({
  model,
  messages: [{ role: 'user', content: 'how much?' }],
  ...extra,
});

const spent = async (name: string, limit: typeof CENT_LIMIT | typeof BUDGET_LIMIT) =>
  (await gateway.stores.budgets.state(keyRef(name), limit)).spentUsd;

describe('output multipliers are in the budget hold', () => {
  it('n=128 on a $0.01 key is refused up front; the same request with n=1 fits', async () => {
    const one = await post('/v1/chat/completions', CENT, chat({ max_tokens: 20 }));
    expect(one.status).toBe(200);
    // 3 choices of 20 tokens at $200/M hold $0.012: more than the whole budget.
    for (const n of [3, 128]) {
      const many = await post('/v1/chat/completions', CENT, chat({ max_tokens: 20, n }));
      expect(many.status).toBe(402);
      expect((many.body as ErrorBody).error.type).toBe('budget_exceeded');
    }
    expect(await spent('cent', CENT_LIMIT)).toBeLessThanOrEqual(CENT_LIMIT.limitUsd);
  });

  it('legacy completions hold every best_of candidate of every prompt', async () => {
    // One prompt, one candidate of 20 tokens: $0.004 plus the prompt fits what is left.
    const single = await post('/v1/completions', CENT, { model: 'legacy', prompt: 'a', max_tokens: 10 });
    expect(single.status).toBe(200);
    const batch = await post('/v1/completions', CENT, {
      model: 'legacy',
      prompt: ['a', 'b'],
      max_tokens: 10,
      n: 1,
      best_of: 3,
    });
    expect(batch.status).toBe(402);
    expect(await spent('cent', CENT_LIMIT)).toBeLessThanOrEqual(CENT_LIMIT.limitUsd);
  });
});

describe('absurd token counts are a 400 naming the field, never a 5xx', () => {
  const BIG = '"__big__"';
  const cases: { name: string; path: string; key: string; body: unknown; param: string; status?: number }[] =
    [
      {
        name: 'max_tokens 1e20',
        path: '/v1/chat/completions',
        key: BUDGET,
        body: chat({ max_tokens: 1e20 }),
        param: 'max_tokens',
      },
      {
        name: 'max_tokens 2^53+1',
        path: '/v1/chat/completions',
        key: BUDGET,
        body: JSON.stringify(chat({ max_tokens: '__big__' })).replace(BIG, '9007199254740993'),
        param: 'max_tokens',
      },
      {
        name: 'max_completion_tokens 1e20',
        path: '/v1/chat/completions',
        key: RATE,
        body: chat({ max_completion_tokens: 1e20 }),
        param: 'max_completion_tokens',
      },
      {
        name: 'max_tokens 0',
        path: '/v1/chat/completions',
        key: BUDGET,
        body: chat({ max_tokens: 0 }),
        param: 'max_tokens',
      },
      {
        name: 'max_tokens 2.5',
        path: '/v1/chat/completions',
        key: BUDGET,
        body: chat({ max_tokens: 2.5 }),
        param: 'max_tokens',
      },
      { name: 'n 129', path: '/v1/chat/completions', key: BUDGET, body: chat({ n: 129 }), param: 'n' },
      { name: 'n 1e20', path: '/v1/chat/completions', key: FREE, body: chat({ n: 1e20 }), param: 'n' },
      {
        name: 'max_tokens above the context window',
        path: '/v1/chat/completions',
        key: BUDGET,
        body: chat({ max_tokens: 1001 }, 'w'),
        param: 'max_tokens',
      },
      {
        name: 'completions max_tokens 1e20',
        path: '/v1/completions',
        key: BUDGET,
        body: { model: 'legacy', prompt: 'x', max_tokens: 1e20 },
        param: 'max_tokens',
      },
      {
        name: 'completions n 1000',
        path: '/v1/completions',
        key: BUDGET,
        body: { model: 'legacy', prompt: 'x', n: 1000 },
        param: 'n',
      },
      {
        name: 'completions best_of 100',
        path: '/v1/completions',
        key: BUDGET,
        body: { model: 'legacy', prompt: 'x', best_of: 100 },
        param: 'best_of',
      },
      {
        name: 'completions best_of < n',
        path: '/v1/completions',
        key: BUDGET,
        body: { model: 'legacy', prompt: 'x', n: 3, best_of: 2 },
        param: 'best_of',
      },
      {
        name: 'completions best_of streamed',
        path: '/v1/completions',
        key: BUDGET,
        body: { model: 'legacy', prompt: 'x', best_of: 2, stream: true },
        param: 'best_of',
      },
      {
        name: 'messages max_tokens 1e20',
        path: '/v1/messages',
        key: BUDGET,
        body: { model: 'm', max_tokens: 1e20, messages: [{ role: 'user', content: 'hi' }] },
        param: 'max_tokens',
      },
      {
        name: 'embeddings token id 1e20',
        path: '/v1/embeddings',
        key: BUDGET,
        body: { model: 'emb', input: [[1e20]] },
        param: 'input',
      },
    ];

  it.each(cases)('$name', async ({ path, key, body, param }) => {
    const res = await post(path, key, body);
    expect(res.status).toBe(400);
    const error = (res.body as ErrorBody).error;
    expect(error).toMatchObject({ type: 'invalid_request_error', code: 400 });
    expect(error.param?.startsWith(param)).toBe(true);
    expect(error.message).toContain(param);
  });

  it('the largest valid bound times n=128 is refused for money or tokens, not crashed on', async () => {
    const huge = chat({ max_tokens: Number.MAX_SAFE_INTEGER, n: 128 });
    const budget = await post('/v1/chat/completions', BUDGET, huge);
    expect(budget.status).toBe(402);
    const rate = await post('/v1/chat/completions', RATE, huge);
    expect(rate.status).toBe(429);
    expect((rate.body as ErrorBody).error.message).toContain('tokens per minute');
  });
});

/** A streamed legacy completion read with node:http, which exposes trailers (fetch does not). */
function streamCompletion(
  body: Record<string, unknown>,
  leaveAfterFirstChunk = false,
): Promise<{ status: number; requestId: string; text: string; trailers: NodeJS.Dict<string> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${gateway.url}/v1/completions`,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${BUDGET}`, 'content-type': 'application/json' },
      },
      (res: IncomingMessage) => {
        let text = '';
        const requestId = String(res.headers['x-gantry-request-id']);
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          text += d;
          if (leaveAfterFirstChunk) {
            req.destroy();
            resolve({ status: res.statusCode ?? 0, requestId, text, trailers: {} });
          }
        });
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, requestId, text, trailers: res.trailers }),
        );
        res.on('error', (err) => (leaveAfterFirstChunk ? undefined : reject(err)));
      },
    );
    req.on('error', (err) => (leaveAfterFirstChunk ? undefined : reject(err)));
    req.end(
      JSON.stringify({ model: 'legacy', prompt: 'tell me a story', max_tokens: 30, stream: true, ...body }),
    );
  });
}

const today = () => new Date().toISOString().slice(0, 10);

async function usageRecord(id: string) {
  const logs = await gateway.stores.usage.logs({ tenant: 'acme', from: today(), to: today(), limit: 1000 });
  return logs.find((r) => r.id === id);
}

/** Waits for a condition the gateway reaches on its own after the client left. */
async function eventually<T>(probe: () => Promise<T | undefined>, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('legacy completion streams', () => {
  it('a complete stream is recorded as 200 and charged what its trailer says', async () => {
    const before = await spent('budget', BUDGET_LIMIT);
    const s = await streamCompletion({});
    expect(s.status).toBe(200);
    expect(s.text).toContain('[DONE]');
    const cost = Number(s.trailers['x-gantry-cost']);
    expect(cost).toBeGreaterThan(0);
    expect(await spent('budget', BUDGET_LIMIT)).toBeCloseTo(before + cost, 9);
    expect(await usageRecord(s.requestId)).toMatchObject({ status: 200, costUsd: cost, stream: true });
  });

  it.each([
    ['break-stream', { type: 'break-stream', afterChunks: 2 }],
    ['stream-error', { type: 'stream-error', afterChunks: 2 }],
  ] as const)(
    'a stream the provider broke (%s) is recorded as 502, not charged, and says 0.0 in its trailer',
    async (_, fault) => {
      fake.setFaults([{ match: { path: '/completions', stream: true }, times: 1, fault }]);
      const before = await spent('budget', BUDGET_LIMIT);
      const s = await streamCompletion({});
      expect(s.status).toBe(200); // the headers went out before the break
      expect(s.text).toContain('"type":"upstream_error"');
      expect(s.trailers['x-gantry-cost']).toBe('0.0');
      expect(await spent('budget', BUDGET_LIMIT)).toBe(before);
      expect(await usageRecord(s.requestId)).toMatchObject({
        status: 502,
        costUsd: 0,
        errorType: 'upstream_error',
      });
      fake.setFaults([]);
    },
  );

  it('a stream the client left is recorded as 499', async () => {
    fake.setFaults([
      { match: { path: '/completions' }, times: 1, fault: { type: 'slow-stream', chunkDelayMs: 30 } },
    ]);
    const s = await streamCompletion({}, true);
    const record = await eventually(() => usageRecord(s.requestId));
    expect(record).toMatchObject({ status: 499, errorType: 'client_closed_request' });
    fake.setFaults([]);
  });
});

describe('cache hits in the spend metric', () => {
  it('a DIRECT hit charges the caller and counts that charge under provider cache', async () => {
    const question = chat({
      messages: [{ role: 'user', content: 'What is the boiling point of water at sea level?' }],
    });
    expect((await post('/v1/chat/completions', CACHED, question)).status).toBe(200);
    const hit = await post('/v1/chat/completions', CACHED, question);
    expect(hit.headers.get('x-gantrycache-status')).toBe('DIRECT');
    const charged = Number(hit.headers.get('x-gantry-cost'));
    expect(charged).toBeGreaterThan(0);
    const metrics = await (await fetch(`${gateway.adminUrl}/metrics`)).text();
    const line = metrics
      .split('\n')
      .find(
        (l) =>
          l.startsWith('gantry_spend_usd_total{') &&
          l.includes('tenant="cached"') &&
          l.includes('provider="cache"'),
      );
    expect(line).toBeDefined();
    expect(Number(line!.split(' ').at(-1))).toBeCloseTo(charged, 9);
  });
});

describe('Redis outage: the settlement journal', () => {
  const inFlight = (n: number) =>
    Array.from({ length: n }, () => post('/v1/chat/completions', BUDGET, chat({ max_tokens: 50 }, 'g')));

  /** Holds budgets for `n` requests, stops Redis, then lets them finish into the journal. */
  async function spendDuringOutage(n: number): Promise<number> {
    const requests = inFlight(n);
    await gated.waiting(n);
    await redis.stop();
    gated.open();
    const results = await Promise.all(requests);
    let total = 0;
    for (const r of results) {
      expect(r.status).toBe(200);
      total += Number(r.headers.get('x-gantry-cost'));
    }
    expect(total).toBeCloseTo(n * GATED_COST, 9);
    return total;
  }

  it('spend made while Redis is down reaches the budget exactly once when it returns; metered keys fail closed meanwhile', async () => {
    const total = await spendDuringOutage(3);
    expect(gateway.journal?.pending).toBe(3);

    const metrics = await (await fetch(`${gateway.adminUrl}/metrics`)).text();
    expect(metrics).toMatch(/^gantry_settlement_journal_pending 3$/m);

    // Fail closed for metered keys (budget or rate limit), with a message that says why.
    for (const key of [BUDGET, RATE]) {
      const refused = await post('/v1/chat/completions', key, chat({ max_tokens: 5 }));
      expect(refused.status).toBe(503);
      expect((refused.body as ErrorBody).error.message).toContain('settlements from a budget store outage');
    }
    // A key without limits needs no store to be served.
    expect((await post('/v1/chat/completions', FREE, chat({ max_tokens: 5 }))).status).toBe(200);

    // A redis-server without persistence comes back empty: what it holds afterwards is the journal's.
    await redis.restart();
    await gateway.journal!.whenEmpty();
    expect(await spent('budget', BUDGET_LIMIT)).toBeCloseTo(total, 9);
    const after = await post('/v1/chat/completions', BUDGET, chat({ max_tokens: 5 }));
    expect(after.status).toBe(200);
    expect(await spent('budget', BUDGET_LIMIT)).toBeCloseTo(
      total + Number(after.headers.get('x-gantry-cost')),
      9,
    );
  });

  it('a gateway restarted during the outage replays its journal at boot, and only once', async () => {
    await redis.restart(); // start from an empty budget
    await gateway.stores.ready();
    const total = await spendDuringOutage(2);
    expect(gateway.journal?.pending).toBe(2);
    await gateway.close();

    await redis.restart();
    gateway = await boot();
    expect(gateway.journal?.pending).toBe(0);
    expect(await spent('budget', BUDGET_LIMIT)).toBeCloseTo(total, 9);

    await gateway.close();
    gateway = await boot();
    expect(await spent('budget', BUDGET_LIMIT)).toBeCloseTo(total, 9);
  });
});
