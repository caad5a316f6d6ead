/** Health, readiness and Prometheus metrics on their own port, away from client traffic. */
import Fastify, { type FastifyInstance } from 'fastify';
import type { ConfigStore } from '../config/store.ts';
import type { Metrics } from '../metrics.ts';

export function buildAdminApp(config: ConfigStore, metrics: Metrics, ready: () => boolean): FastifyInstance {
  const app = Fastify({ logger: false });
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    const snapshot = config.current();
    const ok = ready();
    reply.code(ok ? 200 : 503);
    return {
      status: ok ? 'ready' : 'not ready',
      configVersion: snapshot.version,
      models: snapshot.models.size,
    };
  });
  app.get('/metrics', async (_request, reply) => {
    reply.header('content-type', metrics.registry.contentType);
    return metrics.registry.metrics();
  });
  return app;
}
