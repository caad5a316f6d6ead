import { describe, expect, it } from 'vitest';
import { accumulate, emptyCounters, toRollupRow } from '../stores/usage/accumulate.ts';
import { usageRecord } from '../stores/usage/fixtures.ts';
import { daysInRange, eachDay, monthProgress, parseDay } from './analytics-dates.ts';
import {
  cacheRevenue,
  dashboard,
  filterOptions,
  forecast,
  keyHealth,
  revenue,
  securityView,
  toLogEntry,
  totals,
  usageLogs,
  usageOverview,
  type KeyHealthInput,
} from './analytics.ts';
import type { RollupRow, SecurityRow, UsageRecord } from './usage.ts';

/** One rollup row per record (enough for pure functions: they only sum rows). */
const row = (over: Partial<UsageRecord> = {}, day = '2025-03-14'): RollupRow => {
  const r = usageRecord(over);
  return toRollupRow(
    { day, tenant: r.tenant, keyId: r.keyId, model: r.model, provider: r.provider ?? '' },
    accumulate(emptyCounters(), r),
  );
};

const MARCH = { from: '2025-03-01', to: '2025-03-31' };

describe('analytics dates', () => {
  it('accepts real calendar days only', () => {
    expect(parseDay('2024-02-29')).toBe('2024-02-29');
    for (const bad of [
      '2025-02-29',
      '2025-13-01',
      '2025-00-10',
      '2025-3-1',
      '20250301',
      '2025-03-01T00:00',
      '',
    ])
      expect(parseDay(bad), bad).toBeUndefined();
  });

  it('counts days inclusively and walks them', () => {
    expect(daysInRange({ from: '2025-03-01', to: '2025-03-01' })).toBe(1);
    expect(daysInRange({ from: '2024-01-01', to: '2024-12-31' })).toBe(366);
    expect(eachDay({ from: '2025-02-27', to: '2025-03-02' })).toEqual([
      '2025-02-27',
      '2025-02-28',
      '2025-03-01',
      '2025-03-02',
    ]);
  });

  it('measures the month so far, at least one day', () => {
    expect(monthProgress(Date.parse('2025-02-01T06:00:00Z'))).toMatchObject({
      month: '2025-02',
      daysInMonth: 28,
      daysElapsed: 1,
      range: { from: '2025-02-01', to: '2025-02-01' },
    });
    expect(monthProgress(Date.parse('2024-02-11T00:00:00Z')).daysElapsed).toBe(10);
  });
});

describe('totals', () => {
  it('is all zeros for no rows', () => {
    const t = totals([]);
    expect(t.requests).toBe(0);
    expect(t.spend_usd).toBe(0);
    expect(t.cache.hit_rate).toBe(0);
    expect(t.compression.ratio).toBe(0);
    expect(t.avg_latency_ms).toBe(0);
  });

  it('sums money exactly to the micro-dollar', () => {
    const rows = [row({ costUsd: 0.1 }), row({ costUsd: 0.2 }), row({ costUsd: 0.0000016 })];
    expect(totals(rows).spend_usd).toBe(0.300002);
    const many = Array.from({ length: 1000 }, () => row({ costUsd: 0.001 }));
    expect(totals(many).spend_usd).toBe(1);
  });

  it('counts EU, non-EU and unserved requests apart', () => {
    const t = totals([
      row({ euResident: true }),
      row({ euResident: false }),
      row({ euResident: false }),
      row({ deployment: undefined, provider: undefined, euResident: false }),
    ]);
    expect(t).toMatchObject({ requests: 4, eu_requests: 1, non_eu_requests: 2, unserved_requests: 1 });
  });

  it('derives the cache hit rate and the compression ratio', () => {
    const cache = (band: 'DIRECT' | 'MISS' | 'SKIP') => ({
      band,
      score: undefined,
      tokensSaved: band === 'DIRECT' ? 10 : 0,
      savedUsd: band === 'DIRECT' ? 0.01 : 0,
      creditedUsd: 0,
      latencyMs: 1,
    });
    const t = totals([
      row({ cache: cache('DIRECT') }),
      row({ cache: cache('MISS') }),
      row({ cache: cache('MISS') }),
      row({ cache: cache('SKIP') }),
      row({ compression: { ratio: 0.75, originalTokens: 4000, tokens: 1000, savedUsd: 0.003 } }),
      row({ compression: { ratio: 0.5, originalTokens: 2000, tokens: 1000, savedUsd: 0.001 } }),
    ]);
    expect(t.cache).toEqual({
      lookups: 3,
      hits: 1,
      hit_rate: 0.3333,
      tokens_saved: 10,
      savings_usd: 0.01,
      credits_usd: 0,
    });
    expect(t.compression).toEqual({
      requests: 2,
      original_tokens: 6000,
      saved_tokens: 4000,
      ratio: 0.6667,
      savings_usd: 0.004,
    });
  });
});

describe('key health', () => {
  const base: KeyHealthInput = {
    keyId: 'default/ci',
    tenant: 'acme',
    role: 'user',
    budget: { limitUsd: 10, period: 'monthly' },
    autoRecharge: undefined,
    state: {
      periodKey: 'm2025-03',
      limitUsd: 10,
      spentUsd: 4,
      creditUsd: 0,
      heldUsd: 0.5,
      remainingUsd: 5.5,
      rechargedThisMonthUsd: 0,
    },
  };

  it('reports budget use and status', () => {
    expect(keyHealth(base)).toMatchObject({
      name: 'ci',
      status: 'ok',
      budget: { spent_usd: 4, held_usd: 0.5, remaining_usd: 5.5, percent_used: 40 },
      auto_recharge: null,
    });
    const warn = { ...base, state: { ...base.state!, spentUsd: 8.5, heldUsd: 0, remainingUsd: 1.5 } };
    expect(keyHealth(warn).status).toBe('warning');
    const gone = { ...base, state: { ...base.state!, spentUsd: 10, heldUsd: 0, remainingUsd: 0 } };
    expect(keyHealth(gone).status).toBe('exhausted');
    expect(keyHealth({ ...base, budget: undefined, state: undefined })).toMatchObject({
      status: 'unlimited',
      budget: null,
    });
    const zero = {
      ...base,
      budget: { limitUsd: 0, period: 'total' as const },
      state: { ...base.state!, remainingUsd: 0 },
    };
    expect(keyHealth(zero).budget?.percent_used).toBeNull();
  });

  it('shows recharged credit being spent beyond the limit, and the cap left', () => {
    const h = keyHealth({
      ...base,
      autoRecharge: { enabled: true, thresholdUsd: 2, amountUsd: 5, monthlyCapUsd: 20 },
      state: {
        ...base.state!,
        spentUsd: 12,
        creditUsd: 3,
        heldUsd: 0,
        remainingUsd: 3,
        rechargedThisMonthUsd: 15,
      },
    });
    expect(h.budget).toMatchObject({ percent_used: 120, credit_usd: 3, remaining_usd: 3 });
    expect(h.status).toBe('ok');
    expect(h.auto_recharge).toEqual({
      enabled: true,
      threshold_usd: 2,
      amount_usd: 5,
      monthly_cap_usd: 20,
      recharged_this_month_usd: 15,
      cap_remaining_usd: 5,
    });
    expect(
      keyHealth({
        ...base,
        budget: undefined,
        state: undefined,
        autoRecharge: { enabled: false, thresholdUsd: 1, amountUsd: 1, monthlyCapUsd: 1 },
      }).auto_recharge,
    ).toMatchObject({ enabled: false, recharged_this_month_usd: null, cap_remaining_usd: null });
  });
});

describe('platform view', () => {
  const rows = [
    row({ tenant: 'acme', keyId: 'default/a', costUsd: 1.5 }),
    row({ tenant: 'acme', keyId: 'default/b', costUsd: 0.5 }),
    row({ tenant: 'globex', keyId: 'default/a', costUsd: 2 }),
  ];

  it('splits revenue by tenant and key', () => {
    expect(revenue(rows)).toEqual({
      total_usd: 4,
      by_tenant: [
        { tenant_id: 'acme', revenue_usd: 2, requests: 2, share: 0.5 },
        { tenant_id: 'globex', revenue_usd: 2, requests: 1, share: 0.5 },
      ],
      by_key: [
        { tenant_id: 'globex', key_id: 'default/a', revenue_usd: 2, requests: 1 },
        { tenant_id: 'acme', key_id: 'default/a', revenue_usd: 1.5, requests: 1 },
        { tenant_id: 'acme', key_id: 'default/b', revenue_usd: 0.5, requests: 1 },
      ],
    });
  });

  it('nets cache charges against the credits paid back', () => {
    const hit = (charged: number, saved: number, credited: number) =>
      row({
        costUsd: charged,
        cache: {
          band: 'REUSE',
          score: 0.91,
          tokensSaved: 5,
          savedUsd: saved,
          creditedUsd: credited,
          latencyMs: 1,
        },
      });
    expect(cacheRevenue([hit(0.3, 0.25, 0.025), hit(0.1, 0.1, 0.01), row({ costUsd: 9 })])).toEqual({
      hits: 2,
      charged_usd: 0.4,
      savings_usd: 0.35,
      credits_paid_usd: 0.035,
      net_usd: 0.365,
    });
  });

  it('projects the month linearly from the daily average so far', () => {
    const f = forecast(rows, monthProgress(Date.parse('2025-04-11T00:00:00Z')));
    expect(f).toMatchObject({
      method: 'linear_month_to_date',
      month: '2025-04',
      days_in_month: 30,
      days_elapsed: 10,
      month_to_date: { requests: 3, spend_usd: 4 },
      daily_average: { requests: 0.3, spend_usd: 0.4 },
      projected_month: { requests: 9, spend_usd: 12 },
    });
    expect(f.by_tenant).toEqual([
      { tenant_id: 'acme', month_to_date_usd: 2, projected_usd: 6 },
      { tenant_id: 'globex', month_to_date_usd: 2, projected_usd: 6 },
    ]);
    expect(forecast([], monthProgress(Date.parse('2025-04-01T00:00:00Z'))).projected_month.spend_usd).toBe(0);
  });
});

describe('dashboard', () => {
  const scope = { tenant: 'acme', period: MARCH, filters: {} };

  it('breaks spend down by model, provider and key, highest first', () => {
    const d = dashboard({
      scope,
      rows: [
        row({ model: 'a', costUsd: 1 }),
        row({ model: 'b', provider: 'anthropic', costUsd: 3 }),
        row({ model: 'a', keyId: 'default/x', costUsd: 1 }),
      ],
      keys: [],
      now: Date.parse('2025-03-20T00:00:00Z'),
    });
    expect(d.by_model.map((m) => [m.model, m.spend_usd, m.requests])).toEqual([
      ['b', 3, 1],
      ['a', 2, 2],
    ]);
    expect(d.by_provider.map((p) => p.provider)).toEqual(['anthropic', 'openai']);
    expect(d.by_key.map((k) => [k.key_id, k.spend_usd])).toEqual([
      ['default/acme-ci', 4],
      ['default/x', 1],
    ]);
    expect(d.platform).toBeUndefined();
    expect(d.generated_at).toBe('2025-03-20T00:00:00.000Z');
  });
});

describe('usage overview and logs', () => {
  it('fills quiet days with zeros', () => {
    const o = usageOverview(
      { tenant: 'acme', period: { from: '2025-03-13', to: '2025-03-15' }, filters: {} },
      [
        row({ costUsd: 0.5, latencyMs: 100 }, '2025-03-14'),
        row({ costUsd: 0.25, latencyMs: 201 }, '2025-03-14'),
      ],
    );
    expect(o.series.map((p) => [p.date, p.requests, p.spend_usd, p.avg_latency_ms])).toEqual([
      ['2025-03-13', 0, 0, 0],
      ['2025-03-14', 2, 0.75, 150.5],
      ['2025-03-15', 0, 0, 0],
    ]);
    expect(o.totals.spend_usd).toBe(0.75);
  });

  it('shows log entries in snake_case with explicit nulls', () => {
    const r = usageRecord({
      deployment: undefined,
      provider: undefined,
      status: 402,
      errorType: 'budget_exceeded',
    });
    const e = toLogEntry(r);
    expect(e).toMatchObject({
      id: r.id,
      timestamp: new Date(r.at).toISOString(),
      tenant_id: 'acme',
      key_id: 'default/acme-ci',
      deployment: null,
      provider: null,
      error_type: 'budget_exceeded',
      cache: null,
      guardrails: null,
      compression: null,
      routing: null,
    });
    const withFindings = toLogEntry(
      usageRecord({
        guardrails: {
          action: 'block',
          findings: [
            { guardrail: 'pii', category: 'EMAIL', count: 1, action: 'redact' },
            { guardrail: 'secrets', category: 'aws', count: 1 },
          ],
        },
      }),
    );
    expect(withFindings.guardrails?.findings.map((f) => f.action)).toEqual(['redact', 'block']);
    const logs = usageLogs({ tenant: null, period: MARCH, filters: { model: 'm' } }, 1, [r, usageRecord()]);
    expect(logs).toMatchObject({
      tenant_id: null,
      limit: 1,
      count: 1,
      filters: { model: 'm', key_id: null },
    });
  });
});

describe('security view', () => {
  const sec = (day: string, guardrail: string, category: string, action: string, count = 1): SecurityRow => ({
    tenant: 'acme',
    day,
    guardrail,
    category,
    action,
    count,
    findings: count * 2,
  });
  const blocked = (day: string) => row({ guardrails: { action: 'block', findings: [] } }, day);

  it('breaks violations down and compares the last week with the one before', () => {
    const period = { from: '2025-03-01', to: '2025-03-20' };
    const v = securityView(
      'acme',
      period,
      [blocked('2025-03-20'), blocked('2025-03-19'), blocked('2025-03-18'), blocked('2025-03-10')],
      [
        sec('2025-03-20', 'secrets', 'aws', 'block'),
        sec('2025-03-19', 'pii', 'EMAIL', 'block'),
        sec('2025-03-18', 'pii', 'IBAN', 'block', 2),
        sec('2025-03-10', 'pii', 'EMAIL', 'flag'),
      ],
    );
    expect(v.totals).toEqual({ violations: 4, blocked: 4, redacted: 0, flagged: 0, findings: 10 });
    expect(v.by_guardrail.map((g) => [g.guardrail, g.violations, g.by_action])).toEqual([
      ['pii', 4, { block: 3, redact: 0, flag: 1 }],
      ['secrets', 1, { block: 1, redact: 0, flag: 0 }],
    ]);
    expect(v.by_category.map((c) => [c.category, c.violations])).toEqual([
      ['EMAIL', 2],
      ['IBAN', 2],
      ['aws', 1],
    ]);
    expect(v.by_day).toHaveLength(20);
    expect(v.trend).toEqual({
      window_days: 7,
      current: 3,
      previous: 1,
      change_percent: 200,
      direction: 'up',
    });
  });

  it('has no percentage against an empty previous week', () => {
    const v = securityView('acme', { from: '2025-03-20', to: '2025-03-20' }, [blocked('2025-03-20')], []);
    expect(v.trend).toMatchObject({ current: 1, previous: 0, change_percent: null, direction: 'up' });
    expect(v.by_day).toEqual([{ date: '2025-03-20', violations: 1, blocked: 1, redacted: 0, flagged: 0 }]);
  });
});

describe('filter options', () => {
  it('merges configured keys with keys seen in usage', () => {
    const f = filterOptions({
      tenant: 'acme',
      keys: [{ keyId: 'default/a', tenant: 'acme', role: 'admin' }],
      models: ['m1'],
      providers: ['openai'],
      usage: [
        {
          tenant: 'acme',
          dims: { keys: ['default/a', 'default/old'], models: ['m0', 'm1'], providers: ['gemini'] },
        },
      ],
    });
    expect(f).toEqual({
      tenant_id: 'acme',
      keys: [
        { key_id: 'default/a', name: 'a', tenant_id: 'acme', role: 'admin', configured: true },
        { key_id: 'default/old', name: 'old', tenant_id: 'acme', role: null, configured: false },
      ],
      models: ['m0', 'm1'],
      providers: ['gemini', 'openai'],
    });
  });
});
