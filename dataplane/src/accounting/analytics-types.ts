/**
 * Response bodies of the analytics endpoints (documented in docs/analytics.md). Field names are
 * snake_case like the rest of the public API; money is USD exact to the micro-dollar, rates and
 * ratios are fractions 0..1 with four decimals. Renaming a field is a breaking change.
 */

export interface Period {
  /** YYYY-MM-DD, inclusive, UTC. */
  start_date: string;
  end_date: string;
  days: number;
}

export interface Filters {
  key_id: string | null;
  model: string | null;
  provider: string | null;
}

export interface UsageTotals {
  requests: number;
  /** Requests answered with status >= 400. */
  errors: number;
  /** Requests served by an EU-resident deployment. */
  eu_requests: number;
  /** Requests served by a deployment that is not EU-resident. */
  non_eu_requests: number;
  /** Requests no deployment served (rejected before routing, or every attempt failed). */
  unserved_requests: number;
  tokens: { prompt: number; completion: number; total: number };
  spend_usd: number;
  avg_latency_ms: number;
  cache: {
    lookups: number;
    hits: number;
    hit_rate: number;
    tokens_saved: number;
    savings_usd: number;
    credits_usd: number;
  };
  guardrails: { violations: number; blocked: number; redacted: number; flagged: number };
  compression: {
    requests: number;
    original_tokens: number;
    saved_tokens: number;
    /** saved / original over compressed requests. */
    ratio: number;
    savings_usd: number;
  };
}

/** One line of a per-model, per-provider or per-key breakdown. */
export interface BreakdownCounts {
  requests: number;
  errors: number;
  eu_requests: number;
  non_eu_requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  spend_usd: number;
  cache_hits: number;
  cache_savings_usd: number;
}

export interface KeyHealth {
  key_id: string;
  name: string;
  tenant_id: string;
  role: 'user' | 'admin';
  /** `unlimited` (no budget), `ok`, `warning` (less than 20% of the limit left) or `exhausted`. */
  status: 'unlimited' | 'ok' | 'warning' | 'exhausted';
  budget: {
    limit_usd: number;
    period: 'daily' | 'monthly' | 'total';
    /** `d2025-03-14`, `m2025-03` or `total`. */
    period_key: string;
    spent_usd: number;
    held_usd: number;
    /** Recharged money not yet spent. */
    credit_usd: number;
    /** What a new request may still reserve: allowance left + credit − held. */
    remaining_usd: number;
    /** spent / limit × 100 (above 100 once recharged credit is being spent); null for a zero limit. */
    percent_used: number | null;
  } | null;
  auto_recharge: {
    enabled: boolean;
    threshold_usd: number;
    amount_usd: number;
    monthly_cap_usd: number;
    /** null when the key has no budget (auto-recharge only tops a budget up). */
    recharged_this_month_usd: number | null;
    cap_remaining_usd: number | null;
  } | null;
}

export interface PlatformView {
  revenue: {
    total_usd: number;
    by_tenant: { tenant_id: string; revenue_usd: number; requests: number; share: number }[];
    by_key: { tenant_id: string; key_id: string; revenue_usd: number; requests: number }[];
  };
  cache_revenue: {
    hits: number;
    /** Charged to callers for answers the cache gave. */
    charged_usd: number;
    /** Provider cost the hits avoided. */
    savings_usd: number;
    /** Share of the savings credited back to tenant wallets. */
    credits_paid_usd: number;
    /** charged − credits paid: what cache hits brought in. */
    net_usd: number;
  };
  forecast: Forecast;
}

export interface ConsumptionFigures {
  requests: number;
  total_tokens: number;
  spend_usd: number;
}

export interface Forecast {
  /** Linear projection of the current UTC month from its daily average so far. */
  method: 'linear_month_to_date';
  month: string;
  days_in_month: number;
  /** Fractional days since the month began (at least 1, so day one does not explode). */
  days_elapsed: number;
  month_to_date: ConsumptionFigures;
  daily_average: ConsumptionFigures;
  projected_month: ConsumptionFigures;
  by_tenant: { tenant_id: string; month_to_date_usd: number; projected_usd: number }[];
}

export interface Dashboard {
  /** null: every tenant (platform administrators only). */
  tenant_id: string | null;
  period: Period;
  filters: Filters;
  generated_at: string;
  totals: UsageTotals;
  by_model: (BreakdownCounts & { model: string })[];
  by_provider: (BreakdownCounts & { provider: string })[];
  by_key: (BreakdownCounts & { tenant_id: string; key_id: string })[];
  key_health: KeyHealth[];
  /** Present for platform administrators only. */
  platform?: PlatformView;
}

export interface OverviewPoint {
  date: string;
  requests: number;
  errors: number;
  eu_requests: number;
  non_eu_requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  spend_usd: number;
  cache_hits: number;
  cache_savings_usd: number;
  guardrail_violations: number;
  avg_latency_ms: number;
}

export interface UsageOverview {
  tenant_id: string | null;
  period: Period;
  filters: Filters;
  totals: UsageTotals;
  /** One point per day of the period, days without traffic included. */
  series: OverviewPoint[];
}

export interface LogEntry {
  id: string;
  timestamp: string;
  tenant_id: string;
  key_id: string;
  endpoint: string;
  requested_model: string;
  model: string;
  deployment: string | null;
  provider: string | null;
  eu_resident: boolean;
  status: number;
  error_type: string | null;
  stream: boolean;
  attempts: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cost_usd: number;
  latency_ms: number;
  cache: {
    band: string;
    score: number | null;
    tokens_saved: number;
    savings_usd: number;
    credits_usd: number;
    latency_ms: number;
    /** Served by the exact tier (the same request again, without embedding). */
    exact: boolean;
  } | null;
  guardrails: {
    action: string;
    findings: { guardrail: string; category: string; count: number; action: string }[];
  } | null;
  compression: { ratio: number; original_tokens: number; tokens: number; savings_usd: number } | null;
  routing: { level: string; model: string; effort: string | null } | null;
}

export interface UsageLogs {
  tenant_id: string | null;
  period: Period;
  filters: Filters;
  limit: number;
  count: number;
  /** Newest first. */
  data: LogEntry[];
}

export interface ActionCounts {
  block: number;
  redact: number;
  flag: number;
}

export interface SecurityView {
  tenant_id: string | null;
  period: Period;
  totals: {
    /** Requests whose guardrail verdict was not `allow`. */
    violations: number;
    blocked: number;
    redacted: number;
    flagged: number;
    /** Matches found in them. */
    findings: number;
  };
  /** `violations`: requests with a finding of that guardrail (a request may count under several). */
  by_guardrail: { guardrail: string; violations: number; findings: number; by_action: ActionCounts }[];
  by_category: {
    guardrail: string;
    category: string;
    violations: number;
    findings: number;
    by_action: ActionCounts;
  }[];
  by_day: { date: string; violations: number; blocked: number; redacted: number; flagged: number }[];
  /** The last `window_days` of the period against the `window_days` before them. */
  trend: {
    window_days: number;
    current: number;
    previous: number;
    /** null when the previous window had none. */
    change_percent: number | null;
    direction: 'up' | 'down' | 'flat';
  };
}

export interface CacheBandCounts {
  DIRECT: number;
  REUSE: number;
  TWEAK: number;
  MISS: number;
}

export interface CacheView {
  tenant_id: string;
  period: Period;
  lookups: number;
  hits: number;
  misses: number;
  hit_rate: number;
  by_band: CacheBandCounts;
  tokens_saved: number;
  savings_usd: number;
  /** Credited to the tenant's wallet (its tier's share of the savings). */
  credits_usd: number;
  by_day: {
    date: string;
    lookups: number;
    hits: number;
    hit_rate: number;
    tokens_saved: number;
    savings_usd: number;
    credits_usd: number;
  }[];
  by_model: { model: string; lookups: number; hits: number; hit_rate: number; savings_usd: number }[];
}

export interface FilterOptions {
  tenant_id: string | null;
  /** Configured keys and keys seen in usage (`configured: false` once deleted from the config). */
  keys: {
    key_id: string;
    name: string;
    tenant_id: string;
    role: 'user' | 'admin' | null;
    configured: boolean;
  }[];
  models: string[];
  providers: string[];
  /** Platform administrators asking without tenant_id: every tenant. */
  tenants?: string[];
}
