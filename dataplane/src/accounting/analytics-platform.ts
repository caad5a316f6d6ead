/**
 * What only platform administrators see: revenue (what callers were charged) globally, per
 * tenant and per key, what cache hits brought in, and a consumption forecast. Pure.
 */
import { fromMicros, toMicros } from '../stores/money.ts';
import type { MonthProgress } from './analytics-dates.ts';
import type { ConsumptionFigures, Forecast, PlatformView } from './analytics-types.ts';
import { groupBy, rate, sortByAmount, sum, sumUsd } from './analytics-sum.ts';
import type { RollupRow } from './usage.ts';

export function revenue(rows: readonly RollupRow[]): PlatformView['revenue'] {
  const total = sumUsd(rows, (r) => r.costUsd);
  const byTenant = [...groupBy(rows, (r) => r.tenant)].map(([tenant, g]) => {
    const revenueUsd = sumUsd(g, (r) => r.costUsd);
    return {
      tenant_id: tenant,
      revenue_usd: revenueUsd,
      requests: sum(g, (r) => r.requests),
      share: rate(toMicros(revenueUsd), toMicros(total)),
    };
  });
  const byKey = [...groupBy(rows, (r) => JSON.stringify([r.tenant, r.keyId]))].map(([, g]) => ({
    tenant_id: g[0]!.tenant,
    key_id: g[0]!.keyId,
    revenue_usd: sumUsd(g, (r) => r.costUsd),
    requests: sum(g, (r) => r.requests),
  }));
  return {
    total_usd: total,
    by_tenant: sortByAmount(
      byTenant,
      (t) => t.revenue_usd,
      (t) => t.tenant_id,
    ),
    by_key: sortByAmount(
      byKey,
      (k) => k.revenue_usd,
      (k) => `${k.tenant_id}\n${k.key_id}`,
    ),
  };
}

export function cacheRevenue(rows: readonly RollupRow[]): PlatformView['cache_revenue'] {
  const charged = sumUsd(rows, (r) => r.cacheHitCostUsd);
  const credits = sumUsd(rows, (r) => r.cacheCreditedUsd);
  return {
    hits: sum(rows, (r) => r.cacheHits),
    charged_usd: charged,
    savings_usd: sumUsd(rows, (r) => r.cacheSavedUsd),
    credits_paid_usd: credits,
    net_usd: fromMicros(toMicros(charged) - toMicros(credits)),
  };
}

const twoDecimals = (n: number): number => Math.round(n * 100) / 100;

function project(
  mtd: ConsumptionFigures,
  m: MonthProgress,
): { avg: ConsumptionFigures; month: ConsumptionFigures } {
  const factor = m.daysInMonth / m.daysElapsed;
  return {
    avg: {
      requests: twoDecimals(mtd.requests / m.daysElapsed),
      total_tokens: Math.round(mtd.total_tokens / m.daysElapsed),
      spend_usd: fromMicros(Math.round(toMicros(mtd.spend_usd) / m.daysElapsed)),
    },
    month: {
      requests: Math.round(mtd.requests * factor),
      total_tokens: Math.round(mtd.total_tokens * factor),
      spend_usd: fromMicros(Math.round(toMicros(mtd.spend_usd) * factor)),
    },
  };
}

/**
 * Linear projection of the current UTC month: month-to-date ÷ days elapsed (fractional, at
 * least one) = daily average; × days in the month = projected month. `monthRows` must be the
 * rows of the current month to date.
 */
export function forecast(monthRows: readonly RollupRow[], m: MonthProgress): Forecast {
  const figures = (g: readonly RollupRow[]): ConsumptionFigures => ({
    requests: sum(g, (r) => r.requests),
    total_tokens: sum(g, (r) => r.totalTokens),
    spend_usd: sumUsd(g, (r) => r.costUsd),
  });
  const mtd = figures(monthRows);
  const { avg, month } = project(mtd, m);
  const byTenant = [...groupBy(monthRows, (r) => r.tenant)].map(([tenant, g]) => {
    const t = figures(g);
    return {
      tenant_id: tenant,
      month_to_date_usd: t.spend_usd,
      projected_usd: project(t, m).month.spend_usd,
    };
  });
  return {
    method: 'linear_month_to_date',
    month: m.month,
    days_in_month: m.daysInMonth,
    days_elapsed: twoDecimals(m.daysElapsed),
    month_to_date: mtd,
    daily_average: avg,
    projected_month: month,
    by_tenant: sortByAmount(
      byTenant,
      (t) => t.projected_usd,
      (t) => t.tenant_id,
    ),
  };
}

export function platformView(
  rows: readonly RollupRow[],
  monthRows: readonly RollupRow[],
  m: MonthProgress,
): PlatformView {
  return { revenue: revenue(rows), cache_revenue: cacheRevenue(rows), forecast: forecast(monthRows, m) };
}
