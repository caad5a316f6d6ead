/**
 * Cache management (SPEC.md): `GET /api/v1/cache/stats`, `GET /api/v1/cache/metrics?limit=`,
 * `POST /api/v1/cache/flush`. Admin keys as for analytics: a tenant admin sees and flushes
 * its own tenant's entries only; the platform admin all of them (or one, with `tenant_id`).
 */
import type { FastifyInstance } from 'fastify';
import type { ConfigStore } from '../../config/store.ts';
import type { CacheDeps } from '../../pipeline/cache/stage.ts';
import { authorizeAnalytics, scopeTenant } from './analytics-auth.ts';
import { limitParam } from './analytics-params.ts';

export interface CacheAdminDeps {
  config: ConfigStore;
  cache: CacheDeps;
  adminKeyHash: Buffer | undefined;
}

export function registerCacheAdminRoutes(app: FastifyInstance, deps: CacheAdminDeps): void {
  const scope = (headers: Record<string, string | string[] | undefined>, requested: string | undefined) =>
    scopeTenant(authorizeAnalytics(headers, deps.config.current(), deps.adminKeyHash), requested);

  // A tenant admin gets its own tenant's numbers; the platform admin all tenants together
  // (`tenant_id: null`) or one tenant's with `tenant_id`. The label is always the scope counted.
  app.get<{ Querystring: { tenant_id?: string } }>('/api/v1/cache/stats', async (request) => {
    const tenant = scope(request.headers, request.query.tenant_id);
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

  app.get<{ Querystring: { limit?: string; tenant_id?: string } }>(
    '/api/v1/cache/metrics',
    async (request) => {
      const tenant = scope(request.headers, request.query.tenant_id);
      const limit = limitParam(request.query);
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
    },
  );

  app.post<{ Querystring: { tenant_id?: string } }>('/api/v1/cache/flush', async (request) => {
    const tenant = scope(request.headers, request.query.tenant_id);
    const [entries, vectors] = await Promise.all([
      deps.cache.entries.flush(tenant ?? undefined),
      deps.cache.vectors.flush(tenant ?? undefined),
    ]);
    return { flushed: true, tenant_id: tenant, entries_deleted: entries, vectors_deleted: vectors };
  });
}
