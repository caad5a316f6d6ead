/**
 * The analytics endpoints through Fastify `inject`, on a minimal app with the gateway's error
 * edge, a config compiled from manifests, and both usage-store backends (Redis a real server).
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UsageRecord, UsageStore } from '../../accounting/usage.ts';
import { compile } from '../../config/compile.ts';
import { parseManifests } from '../../config/load.ts';
import { ConfigStore } from '../../config/store.ts';
import { StoreUnavailableError } from '../../stores/errors.ts';
import { createMemoryStores } from '../../stores/index.ts';
import { toMicros } from '../../stores/money.ts';
import { usageRecord } from '../../stores/usage/fixtures.ts';
import { usageBackends, type UsageFixture } from '../../stores/usage/testing.ts';
import { normaliseError } from '../errors.ts';
import { adminKeyHashFromEnv } from './analytics-auth.ts';
import { registerAnalyticsRoutes } from './analytics.ts';

const NOW = Date.parse('2025-03-20T12:00:00Z');
const DAY = 86_400_000;
const PLATFORM_KEY = 'gk-platform-bootstrap-0123456789abcdef0123';
const KEYS = { acmeAdmin: 'sk-acme-admin', acmeCi: 'sk-acme-ci', globexAdmin: 'sk-globex-admin' };

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const manifest = (kind: string, name: string, spec: Record<string, unknown>) =>
  `---\n${JSON.stringify({ apiVersion: 'gantry.dev/v1alpha1', kind, metadata: { name, namespace: 'default' }, spec })}\n`;
const deployment = (name: string, model: string, provider: string, euResident: boolean) =>
  manifest('ModelDeployment', name, {
    model,
    provider,
    upstreamModel: model,
    baseUrl: 'http://127.0.0.1:9/v1',
    apiKeyEnv: 'FAKE_KEY',
    euResident,
  });

const CONFIG = [
  deployment('mini-eu', 'gpt-4o-mini', 'openai', true),
  deployment('mini-us', 'gpt-4o-mini', 'openai', false),
  deployment('claude', 'claude-sonnet', 'anthropic', false),
  deployment('big', 'gpt-4o', 'openai', false),
  manifest('Tenant', 'acme', { tier: 'pro', models: ['gpt-4o-mini', 'claude-sonnet'] }),
  manifest('Tenant', 'globex', { tier: 'free', models: ['*'] }),
  manifest('ApiKey', 'acme-admin', {
    tenantRef: { name: 'acme' },
    keyHash: sha256(KEYS.acmeAdmin),
    role: 'admin',
  }),
  manifest('ApiKey', 'acme-ci', {
    tenantRef: { name: 'acme' },
    keyHash: sha256(KEYS.acmeCi),
    budget: { limitUsd: 50, period: 'monthly' },
    autoRecharge: { enabled: true, thresholdUsd: 5, amountUsd: 20, monthlyCapUsd: 100 },
  }),
  manifest('ApiKey', 'globex-admin', {
    tenantRef: { name: 'globex' },
    keyHash: sha256(KEYS.globexAdmin),
    role: 'admin',
  }),
].join('');

function configStore(): ConfigStore {
  const { items, errors } = parseManifests(CONFIG, 'gantry.yaml');
  if (errors.length > 0) throw new Error(errors.join('\n'));
  const result = compile(items, { env: { FAKE_KEY: 'x' }, version: 1, source: 'gantry.yaml' });
  if (!result.ok) throw new Error(result.errors.join('\n'));
  return new ConfigStore(result.snapshot);
}

function testApp(
  usage: UsageStore,
  budgets = createMemoryStores({ clock: () => NOW }).budgets,
): FastifyInstance {
  const app = Fastify();
  app.setErrorHandler(async (err, _request, reply) => {
    const error = normaliseError(err);
    reply.code(error.status).headers(error.headers);
    return error.toBody();
  });
  registerAnalyticsRoutes(app, {
    config: configStore(),
    usage,
    budgets,
    adminKeyHash: adminKeyHashFromEnv({ GANTRY_ADMIN_KEY: PLATFORM_KEY }),
    clock: () => NOW,
  });
  return app;
}

const acme = (over: Partial<UsageRecord>) =>
  usageRecord({ tenant: 'acme', keyId: 'default/acme-ci', at: NOW, ...over });

/** What the tests record: acme on two days, EU and US deployments, a cache hit, guardrails; globex once. */
const RECORDS: UsageRecord[] = [
  acme({ costUsd: 0.1, deployment: 'mini-eu', euResident: true }),
  acme({ costUsd: 0.2, deployment: 'mini-eu', euResident: true, at: NOW - DAY }),
  acme({ costUsd: 0.3, deployment: 'mini-us', euResident: false }),
  acme({
    model: 'claude-sonnet',
    provider: 'anthropic',
    deployment: 'claude',
    euResident: false,
    costUsd: 1.25,
    cache: { band: 'MISS', score: 0.5, tokensSaved: 0, savedUsd: 0, creditedUsd: 0, latencyMs: 2 },
  }),
  acme({
    costUsd: 0.05,
    cache: {
      band: 'DIRECT',
      score: 0.99,
      tokensSaved: 150,
      savedUsd: 0.04,
      creditedUsd: 0.004,
      latencyMs: 1,
    },
  }),
  acme({
    keyId: 'default/acme-admin',
    deployment: undefined,
    provider: undefined,
    euResident: false,
    status: 403,
    errorType: 'guardrail_blocked',
    costUsd: 0,
    guardrails: {
      action: 'block',
      findings: [{ guardrail: 'prompt-injection', category: 'jailbreak', count: 2 }],
    },
  }),
  acme({
    at: NOW - 10 * DAY,
    guardrails: { action: 'redact', findings: [{ guardrail: 'pii', category: 'EMAIL', count: 3 }] },
  }),
  usageRecord({ tenant: 'globex', keyId: 'default/globex-admin', at: NOW, costUsd: 2, model: 'gpt-4o' }),
];

const spendOf = (records: UsageRecord[]) =>
  Math.round(records.reduce((s, r) => s + r.costUsd, 0) * 1e6) / 1e6;

describe.each(usageBackends)('analytics routes ($name usage store)', (backend) => {
  let fixture: UsageFixture;
  let app: FastifyInstance;

  const get = (url: string, key?: string) =>
    app.inject({ method: 'GET', url, headers: key === undefined ? {} : { authorization: `Bearer ${key}` } });
  const json = async (url: string, key: string) => {
    const res = await get(url, key);
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };

  beforeAll(async () => {
    fixture = await backend.create({ clock: () => NOW });
    const usage = await fixture.open();
    for (const r of RECORDS) await usage.record(r);
    const stores = createMemoryStores({ clock: () => NOW });
    // acme-ci has spent 12.5 of its monthly 50.
    const r = await stores.budgets.reserve({
      tenant: 'acme',
      keyId: 'default/acme-ci',
      budget: { limitUsd: 50, period: 'monthly' },
      estimateUsd: 15,
    });
    if (!r.ok) throw new Error('reserve failed');
    await stores.budgets.settle(r.reservation, 12.5);
    app = testApp(usage, stores.budgets);
  });

  afterAll(async () => {
    await app?.close();
    await fixture?.close();
  });

  describe('authorization', () => {
    it('answers 401 without a key or with an unknown one', async () => {
      for (const key of [undefined, 'sk-nope', `${PLATFORM_KEY}x`]) {
        const res = await get('/api/analytics/dashboard', key);
        expect(res.statusCode).toBe(401);
        expect(res.json().error).toMatchObject({ type: 'authentication_error', code: 401 });
      }
    });

    it('authorizes before it looks at parameters', async () => {
      const url = '/api/analytics/usage-overview?start_date=bad&tenant_id=a&tenant_id=b';
      expect((await get(url)).statusCode).toBe(401);
      expect((await get(url, KEYS.acmeCi)).statusCode).toBe(403);
      expect((await get(url, KEYS.acmeAdmin)).statusCode).toBe(400);
    });

    it('answers 403 to a user-role key', async () => {
      const res = await get('/api/analytics/dashboard', KEYS.acmeCi);
      expect(res.statusCode).toBe(403);
      expect(res.json().error).toMatchObject({ type: 'permission_denied', code: 403 });
    });

    it("answers 403 to a tenant admin asking for another tenant's analytics, on every endpoint", async () => {
      for (const url of [
        '/api/analytics/dashboard?tenant_id=globex',
        '/api/analytics/usage-overview?tenant_id=globex&start_date=2025-03-01&end_date=2025-03-20',
        '/api/analytics/usage/logs?tenant_id=globex',
        '/api/analytics/usage/security?tenant_id=globex',
        '/api/analytics/usage/filters?tenant_id=globex',
        '/api/tenants/globex/analytics/cache',
        '/api/analytics/dashboard?tenant_id=nonexistent',
      ]) {
        const res = await get(url, KEYS.acmeAdmin);
        expect(res.statusCode, url).toBe(403);
        expect(res.json().error, url).toMatchObject({
          type: 'permission_denied',
          code: 403,
          param: 'tenant_id',
        });
      }
    });

    it('scopes a tenant admin to its own tenant by default, without platform fields', async () => {
      const body = await json('/api/analytics/dashboard', KEYS.acmeAdmin);
      expect(body.tenant_id).toBe('acme');
      expect(body.platform).toBeUndefined();
      expect(body.by_key.map((k: { tenant_id: string }) => k.tenant_id)).not.toContain('globex');
      expect((await json('/api/analytics/dashboard?tenant_id=acme', KEYS.acmeAdmin)).totals).toEqual(
        body.totals,
      );
    });

    it('lets the platform admin read any tenant, and 404s an unknown one', async () => {
      expect((await json('/api/analytics/dashboard?tenant_id=globex', PLATFORM_KEY)).tenant_id).toBe(
        'globex',
      );
      const res = await get('/api/analytics/dashboard?tenant_id=initech', PLATFORM_KEY);
      expect(res.statusCode).toBe(404);
      expect(res.json().error).toMatchObject({ type: 'not_found', param: 'tenant_id' });
    });

    it('never knows a platform admin when GANTRY_ADMIN_KEY is unset', async () => {
      const bare = Fastify();
      bare.setErrorHandler(async (err, _req, reply) => {
        const e = normaliseError(err);
        return reply.code(e.status).send(e.toBody());
      });
      registerAnalyticsRoutes(bare, {
        config: configStore(),
        usage: await fixture.open(),
        budgets: createMemoryStores().budgets,
        adminKeyHash: adminKeyHashFromEnv({}),
      });
      const res = await bare.inject({
        url: '/api/analytics/dashboard',
        headers: { authorization: `Bearer ${PLATFORM_KEY}` },
      });
      expect(res.statusCode).toBe(401);
      await bare.close();
    });
  });

  describe('dashboard', () => {
    it('totals the tenant month to date, EU and non-EU requests counted apart', async () => {
      const body = await json('/api/analytics/dashboard', KEYS.acmeAdmin);
      const acmeRecords = RECORDS.filter((r) => r.tenant === 'acme');
      expect(body.period).toEqual({ start_date: '2025-03-01', end_date: '2025-03-20', days: 20 });
      expect(body.totals).toMatchObject({
        requests: 7,
        errors: 1,
        eu_requests: 4,
        non_eu_requests: 2,
        unserved_requests: 1,
        spend_usd: spendOf(acmeRecords),
        cache: {
          lookups: 2,
          hits: 1,
          hit_rate: 0.5,
          tokens_saved: 150,
          savings_usd: 0.04,
          credits_usd: 0.004,
        },
        guardrails: { violations: 2, blocked: 1, redacted: 1, flagged: 0 },
      });
      expect(body.by_model.map((m: { model: string; spend_usd: number }) => [m.model, m.spend_usd])).toEqual([
        ['claude-sonnet', 1.25],
        ['gpt-4o-mini', 0.650045],
      ]);
      expect(body.by_provider.map((p: { provider: string }) => p.provider)).toEqual([
        'anthropic',
        'openai',
        '',
      ]);
    });

    it('reports key health: budget use and auto-recharge status', async () => {
      const body = await json('/api/analytics/dashboard', KEYS.acmeAdmin);
      expect(body.key_health.map((k: { key_id: string }) => k.key_id)).toEqual([
        'default/acme-admin',
        'default/acme-ci',
      ]);
      expect(body.key_health[0]).toMatchObject({ status: 'unlimited', budget: null, auto_recharge: null });
      expect(body.key_health[1]).toEqual({
        key_id: 'default/acme-ci',
        name: 'acme-ci',
        tenant_id: 'acme',
        role: 'user',
        status: 'ok',
        budget: {
          limit_usd: 50,
          period: 'monthly',
          period_key: 'm2025-03',
          spent_usd: 12.5,
          held_usd: 0,
          credit_usd: 0,
          remaining_usd: 37.5,
          percent_used: 25,
        },
        auto_recharge: {
          enabled: true,
          threshold_usd: 5,
          amount_usd: 20,
          monthly_cap_usd: 100,
          recharged_this_month_usd: 0,
          cap_remaining_usd: 100,
        },
      });
    });

    it('gives the platform admin global revenue, per tenant and key, cache revenue and a forecast', async () => {
      const body = await json('/api/analytics/dashboard', PLATFORM_KEY);
      expect(body.tenant_id).toBeNull();
      const total = spendOf(RECORDS);
      expect(body.totals.spend_usd).toBe(total);
      expect(body.platform.revenue.total_usd).toBe(total);
      expect(
        body.platform.revenue.by_tenant.map((t: { tenant_id: string; revenue_usd: number }) => [
          t.tenant_id,
          t.revenue_usd,
        ]),
      ).toEqual([
        ['globex', 2],
        ['acme', spendOf(RECORDS.filter((r) => r.tenant === 'acme'))],
      ]);
      expect(body.platform.revenue.by_key.map((k: { key_id: string }) => k.key_id)).toEqual([
        'default/globex-admin',
        'default/acme-ci',
        'default/acme-admin',
      ]);
      expect(body.platform.cache_revenue).toEqual({
        hits: 1,
        charged_usd: 0.05,
        savings_usd: 0.04,
        credits_paid_usd: 0.004,
        net_usd: 0.046,
      });
      // 19.5 days of March elapsed; 31 days in it.
      expect(body.platform.forecast).toMatchObject({
        method: 'linear_month_to_date',
        month: '2025-03',
        days_in_month: 31,
        days_elapsed: 19.5,
        month_to_date: { requests: 8, spend_usd: total },
        projected_month: {
          requests: Math.round((8 * 31) / 19.5),
          spend_usd: Math.round((toMicros(total) * 31) / 19.5) / 1e6,
        },
      });
      expect(body.key_health.map((k: { tenant_id: string }) => k.tenant_id)).toEqual([
        'acme',
        'acme',
        'globex',
      ]);
      const scoped = await json('/api/analytics/dashboard?tenant_id=acme', PLATFORM_KEY);
      expect(scoped.platform.revenue.by_tenant.map((t: { tenant_id: string }) => t.tenant_id)).toEqual([
        'acme',
      ]);
    });

    it('applies the date range and key, model and provider filters', async () => {
      const day = await json(
        '/api/analytics/dashboard?start_date=2025-03-19&end_date=2025-03-19',
        KEYS.acmeAdmin,
      );
      expect(day.totals).toMatchObject({ requests: 1, spend_usd: 0.2 });
      const model = await json('/api/analytics/dashboard?model=claude-sonnet', KEYS.acmeAdmin);
      expect(model.totals.requests).toBe(1);
      expect(model.filters).toEqual({ key_id: null, model: 'claude-sonnet', provider: null });
      const key = await json('/api/analytics/dashboard?key=default/acme-admin', KEYS.acmeAdmin);
      expect(key.totals.requests).toBe(1);
      expect(key.key_health.map((k: { key_id: string }) => k.key_id)).toEqual(['default/acme-admin']);
      const provider = await json('/api/analytics/dashboard?provider=openai', KEYS.acmeAdmin);
      expect(provider.totals.requests).toBe(5);
    });
  });

  describe('usage-overview', () => {
    it('returns one point per day of the period, quiet days included', async () => {
      const body = await json(
        '/api/analytics/usage-overview?tenant_id=acme&start_date=2025-03-18&end_date=2025-03-20',
        KEYS.acmeAdmin,
      );
      expect(body.series.map((p: { date: string; requests: number }) => [p.date, p.requests])).toEqual([
        ['2025-03-18', 0],
        ['2025-03-19', 1],
        ['2025-03-20', 5],
      ]);
      expect(body.series[2]).toMatchObject({ eu_requests: 2, non_eu_requests: 2, guardrail_violations: 1 });
      expect(body.totals.requests).toBe(6);
    });

    it('defaults to the last 30 days', async () => {
      const body = await json('/api/analytics/usage-overview', KEYS.acmeAdmin);
      expect(body.period).toEqual({ start_date: '2025-02-19', end_date: '2025-03-20', days: 30 });
      expect(body.series).toHaveLength(30);
    });

    it.each([
      ['start_date=2025-13-01&end_date=2025-03-20', 'start_date'],
      ['start_date=2025-02-30&end_date=2025-03-20', 'start_date'],
      ['start_date=yesterday', 'start_date'],
      ['start_date=2025-03-01&end_date=20250320', 'end_date'],
      ['start_date=2025-03-10&end_date=2025-03-01', 'end_date'],
      ['start_date=2024-01-01&end_date=2025-03-20', 'end_date'],
      ['start_date=2025-03-01&start_date=2025-03-02', 'start_date'],
    ])('rejects %s with a 400 naming %s', async (qs, param) => {
      const res = await get(`/api/analytics/usage-overview?${qs}`, KEYS.acmeAdmin);
      expect(res.statusCode).toBe(400);
      const error = res.json().error;
      expect(error).toMatchObject({ type: 'invalid_request_error', code: 400, param });
      expect(error.message).toContain(param);
    });
  });

  describe('usage/logs', () => {
    it('lists requests newest first, filtered by model, key and provider, limited', async () => {
      const all = await json('/api/analytics/usage/logs', KEYS.acmeAdmin);
      expect(all.count).toBe(7);
      expect(all.data[all.data.length - 1].timestamp).toBe(new Date(NOW - 10 * DAY).toISOString());
      const model = await json('/api/analytics/usage/logs?model=claude-sonnet', KEYS.acmeAdmin);
      expect(model.data.map((e: { model: string }) => e.model)).toEqual(['claude-sonnet']);
      expect(model.data[0]).toMatchObject({
        provider: 'anthropic',
        deployment: 'claude',
        eu_resident: false,
        cost_usd: 1.25,
        cache: { band: 'MISS' },
        guardrails: null,
      });
      const key = await json('/api/analytics/usage/logs?key=default/acme-admin', KEYS.acmeAdmin);
      expect(key.data).toHaveLength(1);
      expect(key.data[0]).toMatchObject({ status: 403, provider: null, error_type: 'guardrail_blocked' });
      const provider = await json('/api/analytics/usage/logs?provider=anthropic', KEYS.acmeAdmin);
      expect(provider.count).toBe(1);
      const limited = await json('/api/analytics/usage/logs?limit=2', KEYS.acmeAdmin);
      expect(limited).toMatchObject({ limit: 2, count: 2 });
      const global = await json('/api/analytics/usage/logs?limit=1000', PLATFORM_KEY);
      expect(global.count).toBe(8);
    });

    it.each(['0', '1001', '5.5', 'ten'])('rejects limit=%s', async (limit) => {
      const res = await get(`/api/analytics/usage/logs?limit=${limit}`, KEYS.acmeAdmin);
      expect(res.statusCode).toBe(400);
      expect(res.json().error.param).toBe('limit');
    });
  });

  describe('usage/security', () => {
    it('counts violations by guardrail, category and day, with a trend', async () => {
      const body = await json('/api/analytics/usage/security', KEYS.acmeAdmin);
      expect(body.totals).toEqual({ violations: 2, blocked: 1, redacted: 1, flagged: 0, findings: 5 });
      expect(body.by_guardrail).toEqual([
        { guardrail: 'pii', violations: 1, findings: 3, by_action: { block: 0, redact: 1, flag: 0 } },
        {
          guardrail: 'prompt-injection',
          violations: 1,
          findings: 2,
          by_action: { block: 1, redact: 0, flag: 0 },
        },
      ]);
      expect(body.by_category.map((c: { category: string }) => c.category)).toEqual(['EMAIL', 'jailbreak']);
      expect(body.by_day).toHaveLength(30);
      expect(body.by_day.at(-1)).toEqual({
        date: '2025-03-20',
        violations: 1,
        blocked: 1,
        redacted: 0,
        flagged: 0,
      });
      expect(body.trend).toEqual({
        window_days: 7,
        current: 1,
        previous: 1,
        change_percent: 0,
        direction: 'flat',
      });
    });

    it('computes the trend over two full weeks even for a short period', async () => {
      const body = await json(
        '/api/analytics/usage/security?start_date=2025-03-20&end_date=2025-03-20',
        KEYS.acmeAdmin,
      );
      expect(body.totals.violations).toBe(1);
      expect(body.by_guardrail.map((g: { guardrail: string }) => g.guardrail)).toEqual(['prompt-injection']);
      expect(body.trend).toMatchObject({ current: 1, previous: 1 });
    });
  });

  describe('usage/filters', () => {
    it("lists the tenant's keys, models and providers", async () => {
      const body = await json('/api/analytics/usage/filters', KEYS.acmeAdmin);
      expect(body).toEqual({
        tenant_id: 'acme',
        keys: [
          {
            key_id: 'default/acme-admin',
            name: 'acme-admin',
            tenant_id: 'acme',
            role: 'admin',
            configured: true,
          },
          { key_id: 'default/acme-ci', name: 'acme-ci', tenant_id: 'acme', role: 'user', configured: true },
        ],
        models: ['claude-sonnet', 'gpt-4o-mini'],
        providers: ['anthropic', 'openai'],
      });
    });

    it('lists every tenant for the platform admin', async () => {
      const body = await json('/api/analytics/usage/filters', PLATFORM_KEY);
      expect(body.tenants).toEqual(['acme', 'globex']);
      expect(body.models).toEqual(['claude-sonnet', 'gpt-4o', 'gpt-4o-mini']);
      expect(body.keys).toHaveLength(3);
    });
  });

  describe('tenant cache analytics', () => {
    it('reports hits by band, hit rate, tokens saved, savings and credits', async () => {
      const body = await json('/api/tenants/acme/analytics/cache', KEYS.acmeAdmin);
      expect(body).toMatchObject({
        tenant_id: 'acme',
        lookups: 2,
        hits: 1,
        misses: 1,
        hit_rate: 0.5,
        by_band: { DIRECT: 1, REUSE: 0, TWEAK: 0, MISS: 1 },
        tokens_saved: 150,
        savings_usd: 0.04,
        credits_usd: 0.004,
      });
      expect(body.by_day).toHaveLength(30);
      expect(body.by_model.map((m: { model: string }) => m.model)).toEqual(['gpt-4o-mini', 'claude-sonnet']);
      expect((await get('/api/tenants/globex/analytics/cache', KEYS.acmeAdmin)).statusCode).toBe(403);
      expect((await json('/api/tenants/globex/analytics/cache', PLATFORM_KEY)).lookups).toBe(0);
    });
  });
});

describe('analytics routes when the store is unreachable', () => {
  it('answers 503 service_unavailable, not 500', async () => {
    const down = (): Promise<never> =>
      Promise.reject(new StoreUnavailableError('usage.rollups', 'connection refused'));
    const usage: UsageStore = {
      record: down,
      rollups: down,
      logs: down,
      security: down,
      dimensions: down,
      tenants: down,
    };
    const app = testApp(usage);
    const res = await app.inject({
      url: '/api/analytics/dashboard',
      headers: { authorization: `Bearer ${KEYS.acmeAdmin}` },
    });
    expect(res.statusCode).toBe(503);
    expect(res.json().error).toMatchObject({ type: 'service_unavailable', code: 503 });
    await app.close();
  });
});
