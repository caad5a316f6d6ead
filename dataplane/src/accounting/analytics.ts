/**
 * The analytics endpoints' response bodies, computed from rollup rows, request logs and key
 * health inputs. Pure: the routes read the stores and the config, these functions only shape.
 * Security, cache, key health and platform views live beside this file (analytics-*.ts).
 */
import { eachDay, toPeriod, type DayRange, type MonthProgress } from './analytics-dates.ts';
import { keyHealthList, type KeyHealthInput } from './analytics-keys.ts';
import { platformView } from './analytics-platform.ts';
import {
  breakdownCounts,
  cmp,
  groupBy,
  sortByAmount,
  sum,
  sumUsd,
  totals,
  violations,
} from './analytics-sum.ts';
import type {
  Dashboard,
  FilterOptions,
  Filters,
  LogEntry,
  OverviewPoint,
  UsageLogs,
  UsageOverview,
} from './analytics-types.ts';
import type { RollupRow, UsageDimensions, UsageRecord } from './usage.ts';

export interface Scope {
  /** null: every tenant. */
  tenant: string | null;
  period: DayRange;
  filters: { keyId?: string | undefined; model?: string | undefined; provider?: string | undefined };
}

export const filtersOf = (s: Scope): Filters => ({
  key_id: s.filters.keyId ?? null,
  model: s.filters.model ?? null,
  provider: s.filters.provider ?? null,
});

export interface DashboardInput {
  scope: Scope;
  /** Rollups of the scope's period and filters. */
  rows: readonly RollupRow[];
  keys: readonly KeyHealthInput[];
  now: number;
  /** Platform administrators only: rows of the current month to date (same tenant and filters). */
  platform?: { monthRows: readonly RollupRow[]; month: MonthProgress } | undefined;
}

export function dashboard(i: DashboardInput): Dashboard {
  const { rows, scope } = i;
  const byModel = [...groupBy(rows, (r) => r.model)].map(([model, g]) => ({ model, ...breakdownCounts(g) }));
  const byProvider = [...groupBy(rows, (r) => r.provider)].map(([provider, g]) => ({
    provider,
    ...breakdownCounts(g),
  }));
  const byKey = [...groupBy(rows, (r) => JSON.stringify([r.tenant, r.keyId]))].map(([, g]) => ({
    tenant_id: g[0]!.tenant,
    key_id: g[0]!.keyId,
    ...breakdownCounts(g),
  }));
  const body: Dashboard = {
    tenant_id: scope.tenant,
    period: toPeriod(scope.period),
    filters: filtersOf(scope),
    generated_at: new Date(i.now).toISOString(),
    totals: totals(rows),
    by_model: sortByAmount(
      byModel,
      (m) => m.spend_usd,
      (m) => m.model,
    ),
    by_provider: sortByAmount(
      byProvider,
      (p) => p.spend_usd,
      (p) => p.provider,
    ),
    by_key: sortByAmount(
      byKey,
      (k) => k.spend_usd,
      (k) => `${k.tenant_id}\n${k.key_id}`,
    ),
    key_health: keyHealthList(i.keys),
  };
  if (i.platform) body.platform = platformView(rows, i.platform.monthRows, i.platform.month);
  return body;
}

export function usageOverview(scope: Scope, rows: readonly RollupRow[]): UsageOverview {
  const perDay = groupBy(rows, (r) => r.day);
  const series = eachDay(scope.period).map((date): OverviewPoint => {
    const g = perDay.get(date) ?? [];
    const requests = sum(g, (r) => r.requests);
    return {
      date,
      requests,
      errors: sum(g, (r) => r.errors),
      eu_requests: sum(g, (r) => r.euRequests),
      non_eu_requests: sum(g, (r) => r.nonEuRequests),
      prompt_tokens: sum(g, (r) => r.promptTokens),
      completion_tokens: sum(g, (r) => r.completionTokens),
      total_tokens: sum(g, (r) => r.totalTokens),
      spend_usd: sumUsd(g, (r) => r.costUsd),
      cache_hits: sum(g, (r) => r.cacheHits),
      cache_savings_usd: sumUsd(g, (r) => r.cacheSavedUsd),
      guardrail_violations: sum(g, violations),
      avg_latency_ms: requests > 0 ? Math.round((sum(g, (r) => r.latencyMsTotal) / requests) * 10) / 10 : 0,
    };
  });
  return {
    tenant_id: scope.tenant,
    period: toPeriod(scope.period),
    filters: filtersOf(scope),
    totals: totals(rows),
    series,
  };
}

/** A log entry as the API shows it: snake_case, explicit nulls, never prompt text (records carry none). */
export function toLogEntry(r: UsageRecord): LogEntry {
  return {
    id: r.id,
    timestamp: new Date(r.at).toISOString(),
    tenant_id: r.tenant,
    key_id: r.keyId,
    endpoint: r.endpoint,
    requested_model: r.requestedModel,
    model: r.model,
    deployment: r.deployment ?? null,
    provider: r.provider ?? null,
    eu_resident: r.euResident,
    status: r.status,
    error_type: r.errorType ?? null,
    stream: r.stream,
    attempts: r.attempts,
    prompt_tokens: r.promptTokens,
    completion_tokens: r.completionTokens,
    total_tokens: r.totalTokens,
    cost_usd: r.costUsd,
    latency_ms: r.latencyMs,
    cache: r.cache
      ? {
          band: r.cache.band,
          score: r.cache.score ?? null,
          tokens_saved: r.cache.tokensSaved,
          savings_usd: r.cache.savedUsd,
          credits_usd: r.cache.creditedUsd,
          latency_ms: r.cache.latencyMs,
          exact: r.cache.exact ?? false,
        }
      : null,
    guardrails: r.guardrails
      ? {
          action: r.guardrails.action,
          findings: r.guardrails.findings.map((f) => ({
            guardrail: f.guardrail,
            category: f.category,
            count: f.count,
            action: f.action ?? r.guardrails!.action,
          })),
        }
      : null,
    compression: r.compression
      ? {
          ratio: r.compression.ratio,
          original_tokens: r.compression.originalTokens,
          tokens: r.compression.tokens,
          savings_usd: r.compression.savedUsd,
        }
      : null,
    routing: r.routing
      ? { level: r.routing.level, model: r.routing.model, effort: r.routing.effort ?? null }
      : null,
  };
}

export function usageLogs(scope: Scope, limit: number, records: readonly UsageRecord[]): UsageLogs {
  const data = records.slice(0, limit).map(toLogEntry);
  return {
    tenant_id: scope.tenant,
    period: toPeriod(scope.period),
    filters: filtersOf(scope),
    limit,
    count: data.length,
    data,
  };
}

export interface ConfiguredKey {
  keyId: string;
  tenant: string;
  role: 'user' | 'admin';
}

export interface FilterInput {
  tenant: string | null;
  /** Keys in the config for the scope. */
  keys: readonly ConfiguredKey[];
  /** Models the scope may use that the config deploys, and the providers deploying them. */
  models: readonly string[];
  providers: readonly string[];
  /** Usage dimensions per tenant in the scope. */
  usage: readonly { tenant: string; dims: UsageDimensions }[];
  /** Listed for a platform administrator asking without tenant_id. */
  tenants?: readonly string[] | undefined;
}

const sortedUnique = (values: Iterable<string>): string[] => [...new Set(values)].sort(cmp);

export function filterOptions(i: FilterInput): FilterOptions {
  const keys = new Map<string, FilterOptions['keys'][number]>();
  const id = (tenant: string, keyId: string) => JSON.stringify([tenant, keyId]);
  const name = (keyId: string) => keyId.slice(keyId.lastIndexOf('/') + 1);
  for (const k of i.keys)
    keys.set(id(k.tenant, k.keyId), {
      key_id: k.keyId,
      name: name(k.keyId),
      tenant_id: k.tenant,
      role: k.role,
      configured: true,
    });
  for (const { tenant, dims } of i.usage)
    for (const keyId of dims.keys)
      if (!keys.has(id(tenant, keyId)))
        keys.set(id(tenant, keyId), {
          key_id: keyId,
          name: name(keyId),
          tenant_id: tenant,
          role: null,
          configured: false,
        });
  const body: FilterOptions = {
    tenant_id: i.tenant,
    keys: [...keys.values()].sort((a, b) => cmp(a.tenant_id, b.tenant_id) || cmp(a.key_id, b.key_id)),
    models: sortedUnique([...i.models, ...i.usage.flatMap((u) => u.dims.models)]),
    providers: sortedUnique([...i.providers, ...i.usage.flatMap((u) => u.dims.providers)]),
  };
  if (i.tenants) body.tenants = sortedUnique(i.tenants);
  return body;
}

export { cacheView } from './analytics-cache.ts';
export { keyHealth, keyHealthList, type KeyHealthInput } from './analytics-keys.ts';
export { cacheRevenue, forecast, platformView, revenue } from './analytics-platform.ts';
export { securityQueryRange, securityView, TREND_WINDOW_DAYS } from './analytics-security.ts';
export { totals } from './analytics-sum.ts';
export type * from './analytics-types.ts';
