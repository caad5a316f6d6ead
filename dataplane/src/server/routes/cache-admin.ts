/**
 * Cache management (SPEC.md): `GET /api/v1/cache/stats`, `GET /api/v1/cache/metrics?limit=`,
 * `POST /api/v1/cache/flush`. Admin keys as for analytics: a tenant admin sees and flushes
 * its own tenant's entries only; the platform admin all of them (or one, with `tenant_id`).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ConfigStore } from '../../config/store.ts';
import { GatewayError, invalidParam } from '../../errors.ts';
import type { CacheDeps } from '../../pipeline/cache/stage.ts';
import { authorizeAnalytics, scopeTenant } from './analytics-auth.ts';
import { limitParam, stringParam, type Query } from './analytics-params.ts';

export interface CacheAdminDeps {
  config: ConfigStore;
  cache: CacheDeps;
  adminKeyHash: Buffer | undefined;
}

export function registerCacheAdminRoutes(app: FastifyInstance, deps: CacheAdminDeps): void {
  const scopes = new WeakMap<FastifyRequest, string | null>();
  // Who calls and which tenant, on arrival, before Fastify reads the body: a caller without
  // the right gets its 401/403 and a bad `tenant_id` its 400/404, never a parse error of a body.
  const authorize = async (request: FastifyRequest): Promise<void> => {
    const snapshot = deps.config.current();
    const principal = authorizeAnalytics(request.headers, snapshot, deps.adminKeyHash);
    const tenant = scopeTenant(principal, tenantParam(request.query as Query));
    // Cache entries are written for configured tenants only; a removed tenant's expire by TTL
    // or go with the all-tenants flush.
    if (tenant !== null && !snapshot.tenants.has(tenant))
      throw new GatewayError('not_found', `tenant ${tenant} not found`, { param: 'tenant_id' });
    scopes.set(request, tenant);
  };
  const scope = (request: FastifyRequest): string | null => {
    const tenant = scopes.get(request);
    if (tenant === undefined)
      throw new Error('cache admin route reached without its onRequest authorization');
    return tenant;
  };
  const opts = { onRequest: authorize };

  // A tenant admin gets its own tenant's numbers; the platform admin all tenants together
  // (`tenant_id: null`) or one tenant's with `tenant_id`. The label is always the scope counted.
  app.get('/api/v1/cache/stats', opts, async (request) => {
    const tenant = scope(request);
    const [entries, vectors] = await Promise.all([
      deps.cache.entries.stats(tenant ?? undefined),
      deps.cache.vectors.stats(tenant ?? undefined),
    ]);
    const status = entries.status === 'ok' && vectors.status === 'ok' ? 'ok' : 'degraded';
    return {
      status,
      tenant_id: tenant,
      entries: entries.entries,
      memory_bytes: entries.memoryBytes + vectors.memoryBytes,
      stores: {
        entries: {
          backend: entries.backend,
          status: entries.status,
          entries: entries.entries,
          memory_bytes: entries.memoryBytes,
        },
        vectors: {
          backend: vectors.backend,
          status: vectors.status,
          entries: vectors.entries,
          memory_bytes: vectors.memoryBytes,
        },
      },
    };
  });

  app.get('/api/v1/cache/metrics', opts, async (request) => {
    const tenant = scope(request);
    const limit = limitParam(request.query as Query);
    const data = deps.cache.recent.latest(limit, tenant ?? undefined).map((r) => ({
      at: r.at,
      request_id: r.requestId,
      tenant_id: r.tenant,
      model: r.model,
      band: r.band,
      score: r.score,
      tokens_saved: r.tokensSaved,
      latency_ms: r.latencyMs,
      skip_reason: r.skipReason ?? null,
      exact: r.exact,
    }));
    return { object: 'list', data };
  });

  app.post('/api/v1/cache/flush', opts, async (request) => {
    const tenant = scope(request);
    const [entries, vectors] = await Promise.all([
      deps.cache.entries.flush(tenant ?? undefined),
      deps.cache.vectors.flush(tenant ?? undefined),
    ]);
    return { flushed: true, tenant_id: tenant, entries_deleted: entries, vectors_deleted: vectors };
  });
}

/**
 * `tenant_id` given once. Unlike the analytics reads, an empty one is not "every tenant": a
 * flush sent with a blank field must not empty every tenant's cache, so it is a 400 (leaving
 * the parameter out is how the platform admin names all tenants).
 */
function tenantParam(q: Query): string | undefined {
  const v = q.tenant_id;
  if (typeof v === 'string' && v.trim() === '')
    throw invalidParam('tenant_id', 'is empty; leave it out to mean every tenant');
  return stringParam(q, 'tenant_id');
}
