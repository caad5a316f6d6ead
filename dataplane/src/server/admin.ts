/** Health, readiness and Prometheus metrics on their own port, away from client traffic. */
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
} from 'fastify';
import { randomUUID } from 'node:crypto';
import { ResponseHeaders } from '../brand.ts';
import type { ConfigStatus, ConfigStore } from '../config/store.ts';
import { GatewayError } from '../errors.ts';
import type { Metrics } from '../metrics.ts';
import { acceptedRequestId } from '../telemetry/trace-context.ts';
import { notAccepting } from './closing.ts';
import { normaliseError } from './errors.ts';
import { ConnectionGuard } from './connections.ts';
import { DEFAULT_LIMITS, nodeServerTimeouts, type ConnectionLimits } from './limits.ts';
import { preRoutingAnswers } from './protocol-errors.ts';
import { REQUEST_ID_HEADER } from './routes/headers.ts';

/** Reasons are capped: a file with hundreds of errors must not make /readyz huge. */
const MAX_REASONS = 20;

function configStatusBody(status: ConfigStatus): Record<string, unknown> {
  if (status.status === 'ok')
    return {
      status: 'ok',
      version: status.version,
      sha256: status.sha256,
      loadedAt: status.loadedAt,
      leftOut: status.leftOut,
    };
  return {
    status: 'rejected',
    version: status.version,
    sha256: status.sha256,
    rejectedSha256: status.rejectedSha256,
    since: status.since,
    reason: status.reason.slice(0, MAX_REASONS),
    ...(status.reason.length > MAX_REASONS && { moreReasons: status.reason.length - MAX_REASONS }),
    revokedKeys: status.revokedKeys,
    leftOut: status.leftOut,
  };
}

export function buildAdminApp(
  config: ConfigStore,
  metrics: Metrics,
  ready: () => boolean,
  limits?: Partial<ConnectionLimits>,
  /** The gateway's logger, for the lines this port writes (answers before routing, failures). */
  log?: FastifyBaseLogger,
): FastifyInstance {
  // Probes must stay answerable: a client that never finishes a request is cut here too.
  const bounds = { ...DEFAULT_LIMITS, ...limits };
  const timeouts = nodeServerTimeouts(bounds);
  const edge = preRoutingAnswers();
  // Set by preClose, the moment Fastify starts closing (see the onRequest hook).
  let closing = false;
  const app = Fastify({
    ...(log ? { loggerInstance: log } : { logger: false }),
    // Probes arrive every few seconds: one line each would drown the request log.
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: (req) => acceptedRequestId(req.headers[REQUEST_ID_HEADER]) ?? randomUUID(),
    // The onRequest hook answers the gateway's own 503 instead (closing.ts).
    return503OnClosing: false,
    clientErrorHandler: edge.onClientError,
    // A path Fastify cannot decode gets the SPEC.md body and the ids too.
    frameworkErrors: (err, request, reply) => {
      const error = normaliseError(err);
      // Fastify answers these before its own closing check, which would have said `close`.
      if (closing) reply.header('connection', 'close');
      // Fastify types this reply with unresolved route generics; it is a plain reply.
      void (reply as FastifyReply)
        .code(error.status)
        .header(ResponseHeaders.requestId, request.id)
        .header(REQUEST_ID_HEADER, request.id)
        .header('content-type', 'application/json; charset=utf-8')
        .send(JSON.stringify(error.toBody()));
    },
    http: {
      headersTimeout: timeouts.headersTimeout,
      requestTimeout: timeouts.requestTimeout,
      connectionsCheckingInterval: timeouts.connectionsCheckingInterval,
    },
    requestTimeout: timeouts.requestTimeout,
    keepAliveTimeout: timeouts.keepAliveTimeout,
  });
  app.server.on('connect', edge.onConnect(app.log));
  // Without a cap, sockets held open here would exhaust the process's file descriptors and
  // take the public port down with it. At the cap an idle or unfinished one is evicted, as on
  // the public port, so such sockets cannot shut the kubelet's probes out either.
  // No upgrades here: a request offering one (h2c) is a plain request to this port's routes.
  new ConnectionGuard(app.server, bounds.adminMaxConnections, 'none');
  app.addHook('preClose', () => {
    closing = true;
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.header(ResponseHeaders.requestId, request.id);
    reply.header(REQUEST_ID_HEADER, request.id);
    if (closing) {
      const error = notAccepting();
      return reply.code(error.status).header('connection', 'close').send(error.toBody());
    }
  });
  // The admin port answers errors in the same SPEC.md shape as the public one.
  app.setNotFoundHandler(async (request, reply) => {
    const error = new GatewayError('not_found', `no route ${request.method} ${request.url.split('?', 1)[0]}`);
    return reply.code(error.status).send(error.toBody());
  });
  app.setErrorHandler(async (err, request, reply) => {
    const error = normaliseError(err);
    if (error.status >= 500)
      request.log.error({ err: error.cause ?? error, type: error.type }, 'request failed');
    return reply.code(error.status).headers(error.headers).send(error.toBody());
  });
  app.get('/healthz', async () => ({ status: 'ok' }));
  // A rejected reload keeps readiness: the pod serves its last good snapshot, and failing
  // every pod that saw the same bad file would take the whole service down. It is reported
  // in the body (and as gantry_config_reload_rejected) for operators and rollout checks.
  app.get('/readyz', async (_request, reply) => {
    const snapshot = config.current();
    const ok = ready();
    reply.code(ok ? 200 : 503);
    return {
      status: ok ? 'ready' : 'not ready',
      configVersion: snapshot.version,
      models: snapshot.models.size,
      config: configStatusBody(config.status()),
    };
  });
  app.get('/metrics', async (_request, reply) => {
    reply.header('content-type', metrics.registry.contentType);
    return metrics.registry.metrics();
  });
  return app;
}
