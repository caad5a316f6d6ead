/**
 * The analytics endpoints of SPEC.md. Each handler authorizes the caller (analytics-auth.ts),
 * validates its query (analytics-params.ts), reads the usage and budget stores and the config
 * snapshot, and hands everything to the pure functions of accounting/analytics.ts. Response
 * shapes: docs/analytics.md.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { lastDays, monthProgress, monthToDate, type DayRange } from '../../accounting/analytics-dates.ts';
import {
  cacheView,
  dashboard,
  filterOptions,
  securityQueryRange,
  securityView,
  usageLogs,
  usageOverview,
  type ConfiguredKey,
  type KeyHealthInput,
  type Scope,
} from '../../accounting/analytics.ts';
import type { UsageQuery, UsageStore } from '../../accounting/usage.ts';
import type { Snapshot } from '../../config/snapshot.ts';
import type { ConfigStore } from '../../config/store.ts';
import { GatewayError } from '../../errors.ts';
import type { BudgetStore } from '../../stores/budget.ts';
import { isStoreUnavailable } from '../../stores/errors.ts';
import { authorizeAnalytics, scopeTenant, type Principal } from './analytics-auth.ts';
import {
  dateRange,
  dimensionFilters,
  limitParam,
  MAX_RANGE_DAYS,
  stringParam,
  type Query,
} from './analytics-params.ts';

export interface AnalyticsDeps {
  config: ConfigStore;
  usage: UsageStore;
  budgets: BudgetStore;
  /** SHA-256 of the platform administrator's bootstrap key (`adminKeyHashFromEnv`); undefined: none. */
  adminKeyHash: Buffer | undefined;
  /** Tests move time; the data plane uses the system clock. */
  clock?: () => number;
}

/** Default period of the series endpoints (usage-overview, security, cache). */
export const DEFAULT_PERIOD_DAYS = 30;

interface Caller {
  snapshot: Snapshot;
  principal: Principal;
  /** null: every tenant (platform administrators only). */
  tenant: string | null;
  now: number;
}

const toQuery = (tenant: string | null, range: DayRange, filters: Scope['filters'] = {}): UsageQuery => ({
  tenant: tenant ?? undefined,
  from: range.from,
  to: range.to,
  ...filters,
});

export function registerAnalyticsRoutes(app: FastifyInstance, deps: AnalyticsDeps): void {
  const clock = deps.clock ?? Date.now;

  /** Authorization first: a caller without the right gets 401/403, never feedback on parameters. */
  async function caller(
    request: FastifyRequest,
    reply: FastifyReply,
    requested: () => string | undefined,
  ): Promise<Caller> {
    reply.header('cache-control', 'no-store');
    const snapshot = deps.config.current();
    const principal = authorizeAnalytics(request.headers, snapshot, deps.adminKeyHash);
    const tenant = scopeTenant(principal, requested());
    if (principal.kind === 'platform' && tenant !== null && !snapshot.tenants.has(tenant)) {
      // A tenant removed from the config still has its history.
      if (!(await stores(() => deps.usage.tenants())).includes(tenant))
        throw new GatewayError('not_found', `tenant ${tenant} not found`, { param: 'tenant_id' });
    }
    return { snapshot, principal, tenant, now: clock() };
  }

  const query = (request: FastifyRequest): Query => (request.query ?? {}) as Query;

  app.get('/api/analytics/dashboard', async (request, reply) => {
    const q = query(request);
    const c = await caller(request, reply, () => stringParam(q, 'tenant_id'));
    const period = dateRange(q, c.now, monthToDate(c.now), DEFAULT_PERIOD_DAYS);
    const filters = dimensionFilters(q);
    const scope: Scope = { tenant: c.tenant, period, filters };
    const month = monthProgress(c.now);
    const samePeriod = month.range.from === period.from && month.range.to === period.to;
    const [rows, keys, monthRows] = await stores(() =>
      Promise.all([
        deps.usage.rollups(toQuery(c.tenant, period, filters)),
        keyHealthInputs(deps.budgets, c.snapshot, c.tenant, filters.keyId),
        c.principal.kind === 'platform' && !samePeriod
          ? deps.usage.rollups(toQuery(c.tenant, month.range, filters))
          : undefined,
      ]),
    );
    return dashboard({
      scope,
      rows,
      keys,
      now: c.now,
      platform: c.principal.kind === 'platform' ? { monthRows: monthRows ?? rows, month } : undefined,
    });
  });

  app.get('/api/analytics/usage-overview', async (request, reply) => {
    const q = query(request);
    const c = await caller(request, reply, () => stringParam(q, 'tenant_id'));
    const period = dateRange(q, c.now, lastDays(c.now, DEFAULT_PERIOD_DAYS), DEFAULT_PERIOD_DAYS);
    const filters = dimensionFilters(q);
    const rows = await stores(() => deps.usage.rollups(toQuery(c.tenant, period, filters)));
    return usageOverview({ tenant: c.tenant, period, filters }, rows);
  });

  app.get('/api/analytics/usage/logs', async (request, reply) => {
    const q = query(request);
    const c = await caller(request, reply, () => stringParam(q, 'tenant_id'));
    // The log is bounded anyway; by default it is shown whole.
    const period = dateRange(q, c.now, lastDays(c.now, MAX_RANGE_DAYS), MAX_RANGE_DAYS);
    const filters = dimensionFilters(q);
    const limit = limitParam(q);
    const records = await stores(() => deps.usage.logs({ ...toQuery(c.tenant, period, filters), limit }));
    return usageLogs({ tenant: c.tenant, period, filters }, limit, records);
  });

  app.get('/api/analytics/usage/security', async (request, reply) => {
    const q = query(request);
    const c = await caller(request, reply, () => stringParam(q, 'tenant_id'));
    const period = dateRange(q, c.now, lastDays(c.now, DEFAULT_PERIOD_DAYS), DEFAULT_PERIOD_DAYS);
    const range = securityQueryRange(period);
    const [rows, security] = await stores(() =>
      Promise.all([
        deps.usage.rollups(toQuery(c.tenant, range)),
        deps.usage.security(toQuery(c.tenant, range)),
      ]),
    );
    return securityView(c.tenant, period, rows, security);
  });

  app.get('/api/analytics/usage/filters', async (request, reply) => {
    const q = query(request);
    const c = await caller(request, reply, () => stringParam(q, 'tenant_id'));
    const tenants =
      c.tenant !== null
        ? [c.tenant]
        : [...new Set([...c.snapshot.tenants.keys(), ...(await stores(() => deps.usage.tenants()))])];
    const usage = await stores(() =>
      Promise.all(tenants.map(async (tenant) => ({ tenant, dims: await deps.usage.dimensions(tenant) }))),
    );
    const { models, providers } = configuredModels(c.snapshot, tenants);
    return filterOptions({
      tenant: c.tenant,
      keys: configuredKeys(c.snapshot, c.tenant),
      models,
      providers,
      usage,
      tenants: c.tenant === null ? tenants : undefined,
    });
  });

  app.get<{ Params: { tenant_id: string } }>(
    '/api/tenants/:tenant_id/analytics/cache',
    async (request, reply) => {
      const q = query(request);
      const c = await caller(request, reply, () => request.params.tenant_id);
      const tenant = c.tenant ?? request.params.tenant_id;
      const period = dateRange(q, c.now, lastDays(c.now, DEFAULT_PERIOD_DAYS), DEFAULT_PERIOD_DAYS);
      const rows = await stores(() => deps.usage.rollups(toQuery(tenant, period)));
      return cacheView(tenant, period, rows);
    },
  );
}

/** A store that cannot be reached is a 503 (the data is there, just not now), never a 500. */
async function stores<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (isStoreUnavailable(err))
      throw new GatewayError(
        'service_unavailable',
        'analytics are unavailable: the shared store cannot be reached',
        {
          cause: err,
        },
      );
    throw err;
  }
}

function configuredKeys(snapshot: Snapshot, tenant: string | null): ConfiguredKey[] {
  return [...snapshot.keys.values()]
    .filter((k) => tenant === null || k.tenant === tenant)
    .map((k) => ({ keyId: k.id, tenant: k.tenant, role: k.role }));
}

async function keyHealthInputs(
  budgets: BudgetStore,
  snapshot: Snapshot,
  tenant: string | null,
  keyId: string | undefined,
): Promise<KeyHealthInput[]> {
  const keys = [...snapshot.keys.values()].filter(
    (k) => (tenant === null || k.tenant === tenant) && (keyId === undefined || k.id === keyId),
  );
  return Promise.all(
    keys.map(async (k): Promise<KeyHealthInput> => {
      const budget = k.spec.budget;
      return {
        keyId: k.id,
        tenant: k.tenant,
        role: k.role,
        budget,
        autoRecharge: k.spec.autoRecharge,
        state: budget ? await budgets.state({ tenant: k.tenant, keyId: k.id }, budget) : undefined,
      };
    }),
  );
}

/** The models the tenants may use that the config deploys, and the providers deploying them. */
function configuredModels(
  snapshot: Snapshot,
  tenants: readonly string[],
): { models: string[]; providers: string[] } {
  const models = new Set<string>();
  const providers = new Set<string>();
  for (const name of tenants) {
    const allowed = snapshot.tenants.get(name)?.models;
    if (!snapshot.tenants.has(name)) continue;
    for (const route of snapshot.models.values()) {
      if (allowed !== undefined && !allowed.has(route.model)) continue;
      models.add(route.model);
      for (const d of route.deployments) providers.add(d.provider);
    }
  }
  return { models: [...models], providers: [...providers] };
}
