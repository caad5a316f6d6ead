/**
 * Money across pods: three data planes share one real redis-server and one key's budget and
 * rate limit. Every request is charged exactly once and the books agree to the micro-dollar.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { costUsd } from '../../dataplane/src/accounting/cost.ts';
import { startFakeProvider, type FakeProvider } from '../../dataplane/src/fake-provider/index.ts';
import { startGateway, type Gateway } from '../../dataplane/src/gateway.ts';
import { apiKey, deployment, fakeBase, tenant } from '../harness/stack.ts';
import { startRedis, testRedisUrl, type RedisInstance } from '../harness/redis.ts';

const PRICE = { inputPerMillionTokens: 100, outputPerMillionTokens: 200 };
const BUDGET_KEY = 'sk-money-budget';
const RATE_KEY = 'sk-money-rate';
const BUDGET_USD = 0.4;
const RATE_LIMIT = 40;
const MAX_TOKENS = 40;
const PLATFORM_KEY = 'sk-platform-admin-0123456789abcdef0123';
const TENANT_ADMIN = 'sk-other-admin';

function config(fakeUrl: string): string {
  return [
    deployment({ name: 'priced', model: 'm', baseUrl: fakeBase(fakeUrl), pricing: PRICE }),
    tenant('acme'),
    apiKey('budget-key', BUDGET_KEY, 'acme', { budget: { limitUsd: BUDGET_USD, period: 'monthly' } }),
    apiKey('rate-key', RATE_KEY, 'acme', {
      rateLimit: { requestsPerMinute: RATE_LIMIT, tokensPerMinute: 1_000_000 },
    }),
    tenant('other'),
    apiKey('other-admin', TENANT_ADMIN, 'other', { role: 'admin' }),
  ].join('');
}

let fake: FakeProvider;
let dir: string;
let gateways: Gateway[] = [];

async function startPods(redisUrl: string, prefix: string, n: number): Promise<Gateway[]> {
  const file = join(dir, `${prefix}.yaml`);
  await writeFile(file, config(fake.url));
  return Promise.all(
    Array.from({ length: n }, () =>
      startGateway({
        configFile: file,
        env: { FAKE_PROVIDER_KEY: 'k', GANTRY_ADMIN_KEY: PLATFORM_KEY },
        watch: false,
        redisUrl,
        redisPrefix: prefix,
        preStopMs: 0,
        drainTimeoutMs: 200,
      }),
    ),
  );
}

beforeAll(async () => {
  fake = await startFakeProvider();
  dir = await mkdtemp(join(tmpdir(), 'gantry-money-'));
  gateways = await startPods(testRedisUrl(), `money-${randomUUID()}`, 3);
});
afterAll(async () => {
  await Promise.all(gateways.map((g) => g.close()));
  await fake.close();
  await rm(dir, { recursive: true, force: true });
});

interface Result {
  status: number;
  cost: number;
  body: unknown;
  headers: Headers;
}

const pod = (i: number): Gateway => gateways[i % gateways.length]!;

/** One request through a pod; streams read to the end, their cost computed from the usage chunk. */
async function call(g: Gateway, key: string, stream: boolean, content: string): Promise<Result> {
  const res = await fetch(`${g.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'm',
      max_tokens: MAX_TOKENS,
      stream,
      ...(stream && { stream_options: { include_usage: true } }),
      messages: [{ role: 'user', content }],
    }),
  });
  const text = await res.text();
  if (res.status !== 200)
    return { status: res.status, cost: 0, body: JSON.parse(text), headers: res.headers };
  if (!stream)
    return {
      status: 200,
      cost: Number(res.headers.get('x-gantry-cost')),
      body: JSON.parse(text),
      headers: res.headers,
    };
  const usageLine = text
    .split('\n')
    .filter((l) => l.includes('"usage":{'))
    .at(-1)!;
  const usage = (
    JSON.parse(usageLine.slice('data: '.length)) as {
      usage: { prompt_tokens: number; completion_tokens: number };
    }
  ).usage;
  return { status: 200, cost: costUsd(PRICE, usage), body: text, headers: res.headers };
}

describe('three pods, one budget', () => {
  it('never overspends beyond the estimates in flight, and the books agree to the micro-dollar', async () => {
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        call(pod(i), BUDGET_KEY, i % 4 === 0, `question number ${i} about budgets`),
      ),
    );
    const ok = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status === 402);
    expect(ok.length + refused.length).toBe(200);
    expect(ok.length).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);

    const charged = ok.reduce((sum, r) => sum + Math.round(r.cost * 1e6), 0);
    const budgetKey = { tenant: 'acme', keyId: 'default/budget-key' };
    const state = await gateways[0]!.stores.budgets.state(budgetKey, {
      limitUsd: BUDGET_USD,
      period: 'monthly',
    });
    expect(Math.round(state.spentUsd * 1e6)).toBe(charged);
    // Each admitted request reserved at most this much; at most all of them were in flight at once.
    const estimate = costUsd(PRICE, { prompt_tokens: 20, completion_tokens: MAX_TOKENS });
    expect(state.spentUsd).toBeLessThanOrEqual(BUDGET_USD + ok.length * estimate);
    expect(state.heldUsd).toBe(0);

    const today = new Date().toISOString().slice(0, 10);
    const rows = await gateways[1]!.stores.usage.rollups({
      tenant: 'acme',
      from: today,
      to: today,
      keyId: 'default/budget-key',
    });
    const analyticsMicros = rows.reduce((sum, r) => sum + Math.round(r.costUsd * 1e6), 0);
    expect(analyticsMicros).toBe(charged);
    expect(rows.reduce((sum, r) => sum + r.requests, 0)).toBe(200);

    // The same total through the analytics API of another pod, as the platform admin sees it.
    const res = await fetch(
      `${gateways[2]!.url}/api/analytics/dashboard?tenant_id=acme&key=default/budget-key`,
      {
        headers: { authorization: `Bearer ${PLATFORM_KEY}` },
      },
    );
    expect(res.status).toBe(200);
    const dashboard = (await res.json()) as { totals: { spend_usd: number; requests: number } };
    expect(Math.round(dashboard.totals.spend_usd * 1e6)).toBe(charged);
  });

  it('keeps tenants apart in analytics: a tenant admin cannot read another tenant', async () => {
    const own = await fetch(`${gateways[0]!.url}/api/analytics/dashboard?tenant_id=other`, {
      headers: { authorization: `Bearer ${TENANT_ADMIN}` },
    });
    expect(own.status).toBe(200);
    const foreign = await fetch(`${gateways[0]!.url}/api/analytics/dashboard?tenant_id=acme`, {
      headers: { authorization: `Bearer ${TENANT_ADMIN}` },
    });
    expect(foreign.status).toBe(403);
    expect(((await foreign.json()) as { error: { code: number } }).error.code).toBe(403);
    const user = await fetch(`${gateways[0]!.url}/api/analytics/dashboard?tenant_id=acme`, {
      headers: { authorization: `Bearer ${BUDGET_KEY}` },
    });
    expect(user.status).toBe(403);
  });

  it('answers 402 with the remaining budget and the estimate', async () => {
    const r = await call(pod(0), BUDGET_KEY, false, 'one more please');
    expect(r.status).toBe(402);
    const err = (r.body as { error: { type: string; code: number; message: string } }).error;
    expect(err.type).toBe('budget_exceeded');
    expect(err.code).toBe(402);
    expect(err.message).toMatch(/\$[0-9.]+ remaining/);
    expect(err.message).toMatch(/estimated at \$[0-9.]+/);
  });
});

describe('three pods, one rate limit', () => {
  it('admits no more than the limit across all pods, and says so in headers', async () => {
    const results = await Promise.all(
      Array.from({ length: 120 }, (_, i) => call(pod(i), RATE_KEY, i % 5 === 0, `rate ${i}`)),
    );
    const ok = results.filter((r) => r.status === 200);
    const limited = results.filter((r) => r.status === 429);
    expect(ok.length).toBe(RATE_LIMIT);
    expect(limited.length).toBe(120 - RATE_LIMIT);
    const h = ok[0]!.headers;
    expect(h.get('x-ratelimit-limit-requests')).toBe(String(RATE_LIMIT));
    expect(Number(h.get('x-ratelimit-remaining-requests'))).toBeGreaterThanOrEqual(0);
    expect(h.get('x-ratelimit-reset-requests')).toMatch(/^\d+(ms|s|m\d+s)$/);
    const refused = limited[0]!;
    const err = (refused.body as { error: { type: string; code: number; message: string } }).error;
    expect(err.type).toBe('rate_limit_exceeded');
    expect(err.code).toBe(429);
    expect(err.message).toContain(`${RATE_LIMIT} requests per minute`);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.headers.get('x-ratelimit-remaining-requests')).toBe('0');
  });
});

describe('Redis goes away', () => {
  let redis: RedisInstance;
  let alone: Gateway;
  beforeAll(async () => {
    redis = await startRedis();
    alone = (await startPods(redis.url, `down-${randomUUID()}`, 1))[0]!;
  });
  afterAll(async () => {
    await alone.close();
    await redis.stop();
  });

  it('fails closed with a clear 503, then charges normally once Redis is back', async () => {
    const before = await call(alone, BUDGET_KEY, false, 'before the outage');
    expect(before.status).toBe(200);
    const requestsBefore = fake.requests.length;
    await redis.stop();
    const during = await call(alone, BUDGET_KEY, false, 'during the outage');
    expect(during.status).toBe(503);
    const err = (during.body as { error: { type: string; message: string } }).error;
    expect(err.type).toBe('service_unavailable');
    expect(err.message).toContain('not charged');
    expect(fake.requests.length).toBe(requestsBefore);
    await redis.restart();
    await alone.stores.ready(5000);
    const after = await call(alone, BUDGET_KEY, false, 'after the outage');
    expect(after.status).toBe(200);
  });
});

describe('auto-recharge from the tenant wallet', () => {
  it('tops the key up from the wallet within the monthly cap, with a ledger entry per movement', async () => {
    const file = join(dir, 'recharge.yaml');
    await writeFile(
      file,
      [
        deployment({ name: 'priced', model: 'm', baseUrl: fakeBase(fake.url), pricing: PRICE }),
        tenant('wallet-t', ['*'], { wallet: { balanceUsd: 1 } }),
        apiKey('recharging', 'sk-recharge', 'wallet-t', {
          budget: { limitUsd: 0.02, period: 'monthly' },
          autoRecharge: { enabled: true, thresholdUsd: 0.01, amountUsd: 0.02, monthlyCapUsd: 0.06 },
        }),
      ].join(''),
    );
    const g = await startGateway({
      configFile: file,
      env: { FAKE_PROVIDER_KEY: 'k' },
      watch: false,
      preStopMs: 0,
      drainTimeoutMs: 200,
    });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 40 && statuses.at(-1) !== 402; i++)
        statuses.push((await call(g, 'sk-recharge', false, `recharge ${i}`)).status);
      expect(statuses.at(-1)).toBe(402);
      const served = statuses.filter((s) => s === 200).length;
      const perRequest = costUsd(PRICE, { prompt_tokens: 5, completion_tokens: 20 });
      // More was served than the bare budget allows: the wallet paid for the rest.
      expect(served * perRequest).toBeGreaterThan(0.02);
      const ledger = await g.stores.wallets.ledger('wallet-t');
      const recharges = ledger.filter((e) => e.kind === 'recharge');
      expect(recharges.length).toBeGreaterThan(0);
      expect(recharges.reduce((s, e) => s - e.amountUsd, 0)).toBeLessThanOrEqual(0.06 + 1e-9);
      const balance = await g.stores.wallets.balance('wallet-t');
      expect(balance).toBeCloseTo(
        ledger.reduce((s, e) => s + e.amountUsd, 0),
        9,
      );
      expect((await g.stores.wallets.rebuildBalance('wallet-t')).balanceUsd).toBeCloseTo(balance, 9);
    } finally {
      await g.close();
    }
  });
});
