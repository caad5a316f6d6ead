/**
 * The public data-plane app: authentication, the OpenAI- and Anthropic-compatible routes,
 * and one error edge. Admin surfaces (/metrics, /healthz) live on a separate port.
 */
import Fastify, {
  LogController,
  type FastifyInstance,
  type FastifyReply,
  type FastifyServerOptions,
} from 'fastify';
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { ResponseHeaders } from '../brand.ts';
import type { ConfigStore } from '../config/store.ts';
import { GatewayError } from '../errors.ts';
import type { Metrics } from '../metrics.ts';
import type { PipelineDeps } from '../pipeline/forward.ts';
import { settle } from '../pipeline/settlement.ts';
import { countUnknownRefusal } from '../pipeline/unknown-model.ts';
import { abandonedOutcome } from '../pipeline/unanswered-call.ts';
import { jsonDepthLimit } from '../formats/json-depth.ts';
import type { RequestContext } from '../pipeline/context.ts';
import type { OtlpTracer } from '../telemetry/otlp.ts';
import { acceptedRequestId } from '../telemetry/trace-context.ts';
import { notAccepting } from './closing.ts';
import { isOverPipelined, overPipelined } from './connections.ts';
import { createContext } from './context.ts';
import { DrainAborts } from './drain-aborts.ts';
import { isAdministrativePath } from './admin-paths.ts';
import { lazySchemaController } from './lazy-validators.ts';
import { checkJsonDepth } from './depth-guard.ts';
import { oversizedModelName } from './model-name.ts';
import type { StreamResult } from './stream-writer.ts';
import { SHUTTING_DOWN } from './stream-writer.ts';
import {
  DEFAULT_BODY_LIMIT,
  DEFAULT_LIMITS,
  MAX_PATH_PARAM_CHARS,
  nodeServerTimeouts,
  type ConnectionLimits,
} from './limits.ts';
import { normaliseError } from './errors.ts';
import { preRoutingAnswers } from './protocol-errors.ts';
import { chatRoute } from './routes/chat.ts';
import { REQUEST_ID_HEADER } from './routes/headers.ts';
import { completionsRoute } from './routes/completions.ts';
import { embeddingsRoute } from './routes/embeddings.ts';
import type { RouteHooks } from './routes/hooks.ts';
import { messagesRoute, anthropicErrorBody } from './routes/messages.ts';
import { modelsRoute } from './routes/models.ts';
import { countTokensRoute } from './routes/count-tokens.ts';
import { responsesRoute } from './routes/responses.ts';
import type { ResponseStore } from '../stores/responses/types.ts';
import { moderationsRoute } from './routes/moderations.ts';
import { tokenCounterRoute } from './routes/token-counter.ts';
import { rerankRoute } from './routes/rerank.ts';
import { generateContentRoute } from './routes/generate-content.ts';
import { fineTuningRoutes } from './routes/fine-tuning.ts';
import { imagesRoute } from './routes/images.ts';
import { audioRoute } from './routes/audio.ts';
import { videosRoute } from './routes/videos.ts';
import { mediaLimits } from './routes/media-scope.ts';
import { resourceRoutes } from './routes/resources.ts';
import { registerAnalyticsRoutes } from './routes/analytics.ts';
import { registerCacheAdminRoutes } from './routes/cache-admin.ts';
import { registerHeldAdminRoutes } from './routes/held-admin.ts';
import { agentRoutes } from './routes/agents.ts';
import type { RagIndexStore } from '../stores/rag/types.ts';
import { realtimeRoutes } from './routes/realtime.ts';
import { RealtimeProxy } from '../realtime/server.ts';
import { DEFAULT_REALTIME_LIMITS, type RealtimeLimits } from '../realtime/limits.ts';
import { endpointOfRoute } from '../accounting/endpoint-of-route.ts';
import { routeLabel } from './route-label.ts';

export interface AppOptions {
  config: ConfigStore;
  pipeline: PipelineDeps;
  metrics: Metrics;
  logger?: FastifyServerOptions['logger'];
  bodyLimitBytes?: number;
  /** Deepest JSON nesting a body may have (GANTRY_MAX_JSON_DEPTH); 64 when unset. */
  maxJsonDepth?: number;
  requestTimeoutMs?: number;
  /** SHA-256 of the platform admin's bootstrap key (GANTRY_ADMIN_KEY), for /api/ analytics. */
  adminKeyHash?: Buffer | undefined;
  /** The secret compaction items are sealed with (GANTRY_COMPACTION_SECRET); the key hash when unset. */
  compactionSecret?: Buffer | undefined;
  /** Exports a span per request when an OTLP endpoint is configured. */
  tracer?: OtlpTracer | undefined;
  /** Receive and keep-alive timeouts (the connection cap is the gateway's ConnectionGuard). */
  limits?: Partial<ConnectionLimits>;
  /** Aborted at the shutdown drain deadline: requests still running end with an error. */
  shutdown?: AbortSignal;
  /** Stored Responses-API responses; the pipeline's stores' unless given. */
  responses?: ResponseStore;
  /** Largest file a media upload may carry (GANTRY_MAX_UPLOAD_BYTES); 25 MB when unset. */
  maxUploadBytes?: number | undefined;
  /** RAG indexes (/v1/rag/*); in process unless given. */
  rag?: RagIndexStore | undefined;
  /** Realtime session limits (message size, duration, idle time, sessions per key). */
  realtime?: Partial<RealtimeLimits> | undefined;
}

export { DEFAULT_BODY_LIMIT };

/** A request's whole time, failover included, when the gateway is not told otherwise. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 120_000;

const adminDenied = (url: string): GatewayError =>
  new GatewayError(
    'permission_denied',
    `${url.split('?', 1)[0]} is an administrative route and is not served here`,
  );

/** The Anthropic route answers errors in Anthropic's shape as well as SPEC.md's. */
const errorBody = (url: string, error: GatewayError): object =>
  /^\/v1\/messages(?:[/?]|$)/.test(url) ? anthropicErrorBody(error) : error.toBody();

/**
 * Answers that leave the request body unread close the connection at once, so a caller
 * without a valid key cannot keep a socket open by never finishing its body.
 */
export function closesConnection(status: number, authenticated: boolean): boolean {
  return status === 401 || status === 413 || (status === 403 && !authenticated);
}

const deferredSchemas = new WeakMap<FastifyInstance, (() => void)[]>();

/** Compiles every route schema `buildApp` deferred; how a test proves each one compiles. Returns the count. */
export function compileDeferredSchemas(app: FastifyInstance): number {
  const pending = deferredSchemas.get(app) ?? [];
  for (const compileNow of pending) compileNow();
  return pending.length;
}

export function buildApp(opts: AppOptions): FastifyInstance {
  const deferred: (() => void)[] = [];
  const maxJsonDepth = jsonDepthLimit(opts.maxJsonDepth);
  const timeouts = nodeServerTimeouts({ ...DEFAULT_LIMITS, ...opts.limits });
  const shutdown = opts.shutdown ?? new AbortController().signal;
  // Every open stream listens for the drain deadline: thousands, not a leak.
  setMaxListeners(0, shutdown);
  const drain = new DrainAborts(shutdown);
  const edge = preRoutingAnswers();
  // Set by preClose, the moment Fastify starts closing (see the onRequest hook).
  let closing = false;
  const app = Fastify({
    http: {
      headersTimeout: timeouts.headersTimeout,
      requestTimeout: timeouts.requestTimeout,
      connectionsCheckingInterval: timeouts.connectionsCheckingInterval,
    },
    // Fastify sets these two on the server itself, over the `http` options.
    requestTimeout: timeouts.requestTimeout,
    keepAliveTimeout: timeouts.keepAliveTimeout,
    logger: opts.logger ?? false,
    bodyLimit: opts.bodyLimitBytes ?? DEFAULT_BODY_LIMIT,
    // One line per request is written by `observe` below, with the fields that matter here.
    logController: new LogController({ disableRequestLogging: true }),
    // A caller's own id (sane ones only) ties our logs and the upstream's to its own.
    genReqId: (req) => acceptedRequestId(req.headers[REQUEST_ID_HEADER]) ?? randomUUID(),
    // Fastify's own 503 while closing has neither the SPEC.md body nor a request id: the
    // onRequest hook below answers it instead.
    return503OnClosing: false,
    // Fastify's default (100) cut A2A agent names the config allows; the Gemini path carries its
    // model in a wildcard and answers the body field's 400 instead.
    routerOptions: { maxParamLength: MAX_PATH_PARAM_CHARS },
    // Each route's request schema is compiled when the route is first called (lazy-validators.ts).
    schemaController: lazySchemaController(undefined, (compileNow) => deferred.push(compileNow)),
    ajv: {
      customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: false, allErrors: false },
    },
    // Errors raised before routing get the SPEC.md body and a request id too.
    clientErrorHandler: edge.onClientError,
    frameworkErrors: (err, request, reply) => {
      const error = isAdministrativePath(request.url) ? adminDenied(request.url) : normaliseError(err);
      // Fastify types this reply with unresolved route generics; it is a plain reply.
      void (reply as FastifyReply)
        .code(error.status)
        .header(ResponseHeaders.requestId, request.id)
        .header(REQUEST_ID_HEADER, request.id)
        .header('content-type', 'application/json; charset=utf-8')
        .send(JSON.stringify(errorBody(request.url, error)));
    },
  });
  app.server.on('connect', edge.onConnect(app.log));
  app.addHook('preClose', () => {
    closing = true;
  });
  // Only JSON bodies are accepted: any other content-type is a 415, not a schema error.
  app.removeContentTypeParser('text/plain');
  // Static paths → methods they answer, so a wrong method is a 405 rather than a 404.
  const methodsByPath = new Map<string, Set<string>>();
  app.addHook('onRoute', (route) => {
    const methods = methodsByPath.get(route.url) ?? new Set<string>();
    for (const m of [route.method].flat()) methods.add(m);
    methodsByPath.set(route.url, methods);
  });
  const requestTimeoutMs = opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  app.decorateRequest('gantry', null);
  app.decorateRequest('gantryObserved', false);
  // Bound once: a closure per request was measurable on the hot path.
  const inflightDone = (): void => opts.metrics.inflight.dec();

  const hooks: RouteHooks = {
    // Built once per request, by the onRequest hook below; routes reuse it.
    context: (request, reply) =>
      (request.gantry ??= createContext(request, reply, opts.config, requestTimeoutMs, opts.tracer, drain)),
    shutdown,
    streamed: async (request, result) => {
      const ctx = request.gantry;
      if (ctx && !ctx.settled) {
        ctx.usage.endpoint ??= endpointOfRoute(routeLabel(request));
        await settle(opts.pipeline, ctx, { status: result.status, errorType: 'internal_error', costUsd: 0 });
      }
      observe(routeLabel(request), result.status, request, result);
    },
  };

  // A streamed (hijacked) reply is reported by its route and, when it finishes, by Fastify's
  // onResponse as well: the first report counts, so each request is counted and logged once.
  const observe = (
    route: string,
    status: number,
    request: {
      gantry: RequestContext | null;
      gantryObserved: boolean;
      id: string;
      method: string;
      log: FastifyInstance['log'];
    },
    stream?: StreamResult,
  ) => {
    if (request.gantryObserved) return;
    request.gantryObserved = true;
    const end = Date.now();
    const ctx = request.gantry;
    if (!ctx) {
      opts.metrics.answered(route, status, undefined);
      request.log.info({ route, status }, 'request completed');
      return;
    }
    opts.metrics.answered(route, status, (end - ctx.startedAt) / 1000);
    const firstChunkAt = stream?.firstChunkAt;
    const ttftMs = firstChunkAt === undefined ? undefined : firstChunkAt - ctx.startedAt;
    const served = ctx.served;
    if (ttftMs !== undefined && served?.model) opts.metrics.firstToken(served.model, ttftMs / 1000);
    request.log.info(requestLine(route, status, ctx, end, ttftMs), 'request completed');
    if (opts.tracer && ctx.trace)
      opts.tracer.end({
        trace: ctx.trace,
        name: `${request.method} ${route}`,
        startMs: ctx.startedAt,
        endMs: end,
        error: status >= 500,
        attributes: spanAttributes(request.method, route, status, ctx, ttftMs),
      });
  };

  app.addHook('onRequest', async (request, reply) => {
    // On the reply, not the raw response (which would slow every writeHead); hijacked streams
    // write them with their own head (streamHeaders).
    reply.header(ResponseHeaders.requestId, request.id);
    reply.header(REQUEST_ID_HEADER, request.id);
    // A request that reaches a connection still open while the server closes is shed before
    // any work (Fastify has already marked the connection to close after this answer).
    if (closing) {
      const error = notAccepting();
      return reply.code(error.status).send(errorBody(request.url, error));
    }
    if (isOverPipelined(request.raw)) {
      const error = overPipelined();
      return reply.code(error.status).send(errorBody(request.url, error));
    }
    // Counted until the socket's response closes: finished, failed or abandoned alike.
    opts.metrics.inflight.inc();
    // `on`, not `once`: a response closes once, and once() wraps each listener in a closure.
    reply.raw.on('close', inflightDone);
    if (isAdministrativePath(request.url)) throw adminDenied(request.url);
    // Authenticate before the body is read and validated: a caller without a valid key gets
    // a 401, never schema feedback, and cannot make the gateway parse a large body.
    // The /api/ analytics routes authenticate admins themselves (the platform key is not a config key).
    if (request.routeOptions.url?.startsWith('/v1/')) hooks.context(request, reply);
  });
  // Right after parsing: nothing (schema validation, cache key, translation) has walked the body yet.
  app.addHook('preValidation', async (request) => {
    checkJsonDepth(request.body, maxJsonDepth);
    // Before any route reads the model: an oversized name is never routed, logged or recorded.
    const error = oversizedModelName(request);
    if (error) throw error;
  });
  app.addHook('onResponse', async (request, reply) =>
    observe(routeLabel(request), reply.statusCode, request),
  );

  app.setErrorHandler(async (err, request, reply) => {
    // A request cut by the drain deadline is not the client's doing: it is told why.
    const ctx = request.gantry;
    const normalised =
      shutdown.aborted && ctx?.signal.aborted
        ? new GatewayError('service_unavailable', SHUTTING_DOWN)
        : normaliseError(err);
    // A made-up model's 404 counts against the key's request rate (a 429 past it).
    const error = ctx ? await countUnknownRefusal(opts.pipeline.stores, ctx, normalised) : normalised;
    if (error.status >= 500)
      request.log.error({ err: error.cause ?? error, type: error.type }, 'request failed');
    if (ctx) {
      // Release the hold and record the failure; a failed request is never charged. One
      // refused before its pipeline named the endpoint is recorded under its route's.
      ctx.usage.endpoint ??= endpointOfRoute(routeLabel(request));
      // Except a call its client left once it was upstream: the provider bills that prompt.
      // (One cut by the drain deadline is a 503, the gateway's doing: not charged.)
      const abandoned = error.status === 499 ? abandonedOutcome(ctx) : undefined;
      await settle(
        opts.pipeline,
        ctx,
        abandoned ?? { status: error.status, errorType: error.type, costUsd: 0 },
      );
      reply.headers(ctx.responseHeaders);
    }
    reply.code(error.status).headers(error.headers);
    if (closesConnection(error.status, ctx !== null)) reply.header('connection', 'close');
    return errorBody(request.url, error);
  });
  app.setNotFoundHandler(async (request) => {
    const path = request.url.split('?', 1)[0]!;
    const allowed = methodsByPath.get(path);
    if (allowed)
      throw new GatewayError('method_not_allowed', `${path} does not answer ${request.method}`, {
        headers: { allow: [...allowed].join(', ') },
      });
    throw new GatewayError('not_found', `no route ${request.method} ${path}`);
  });

  chatRoute(app, opts.pipeline, hooks);
  messagesRoute(app, opts.pipeline, hooks);
  responsesRoute(
    app,
    opts.pipeline,
    hooks,
    opts.responses ?? opts.pipeline.stores.responses,
    opts.compactionSecret,
  );
  completionsRoute(app, opts.pipeline, hooks);
  embeddingsRoute(app, opts.pipeline, hooks);
  modelsRoute(app, hooks);
  countTokensRoute(app, hooks);
  moderationsRoute(app, opts.pipeline, hooks);
  tokenCounterRoute(app, opts.pipeline, hooks);
  rerankRoute(app, opts.pipeline, hooks);
  generateContentRoute(app, opts.pipeline, hooks);
  fineTuningRoutes(app, opts.pipeline, hooks);
  imagesRoute(app, opts.pipeline, hooks, mediaLimits(opts.maxUploadBytes));
  audioRoute(app, opts.pipeline, hooks, mediaLimits(opts.maxUploadBytes));
  videosRoute(app, opts.pipeline, hooks, mediaLimits(opts.maxUploadBytes), opts.pipeline.stores.videoJobs);
  agentRoutes(app, opts.pipeline, hooks, { maxUploadBytes: opts.maxUploadBytes, rag: opts.rag });
  resourceRoutes(app, opts.pipeline, hooks, mediaLimits(opts.maxUploadBytes));
  realtimeRoutes(app, opts.pipeline, hooks);
  const realtime = new RealtimeProxy({
    server: app.server,
    config: opts.config,
    pipeline: opts.pipeline,
    metrics: opts.metrics,
    log: app.log,
    limits: { ...DEFAULT_REALTIME_LIMITS, ...opts.realtime },
    shutdown,
    tracer: opts.tracer,
  });
  app.decorate('realtime', realtime);
  registerAnalyticsRoutes(app, {
    config: opts.config,
    usage: opts.pipeline.stores.usage,
    budgets: opts.pipeline.stores.budgets,
    adminKeyHash: opts.adminKeyHash,
  });
  registerCacheAdminRoutes(app, {
    config: opts.config,
    cache: opts.pipeline.cache,
    adminKeyHash: opts.adminKeyHash,
  });
  registerHeldAdminRoutes(app, {
    config: opts.config,
    stores: opts.pipeline.stores,
    adminKeyHash: opts.adminKeyHash,
  });
  deferredSchemas.set(app, deferred);
  return app;
}

/** One line per request: who, what served, how it ended, how long, what it cost. Never the key or the prompt. */
function requestLine(
  route: string,
  status: number,
  ctx: RequestContext,
  end: number,
  ttftMs: number | undefined,
) {
  const served = ctx.served;
  return {
    route,
    status,
    tenant: ctx.tenant.name,
    keyId: ctx.key.id,
    requestedModel: ctx.usage.requestedModel,
    model: served?.model,
    deployment: served?.deployments,
    latencyMs: end - ctx.startedAt,
    ttftMs,
    costUsd: served?.costUsd ?? 0,
    traceId: ctx.trace?.traceId,
    // The usage record's id, when the caller chose the request id (which may repeat).
    recordId: ctx.id === ctx.requestId ? undefined : ctx.id,
  };
}

function spanAttributes(
  method: string,
  route: string,
  status: number,
  ctx: RequestContext,
  ttftMs: number | undefined,
) {
  const served = ctx.served;
  return {
    'http.request.method': method,
    'http.route': route,
    'http.response.status_code': status,
    'gantry.request_id': ctx.requestId,
    'gantry.record_id': ctx.id === ctx.requestId ? undefined : ctx.id,
    'gantry.tenant': ctx.tenant.name,
    'gantry.key_id': ctx.key.id,
    'gen_ai.request.model': ctx.usage.requestedModel,
    'gen_ai.response.model': served?.model,
    'gantry.deployment': served?.deployments,
    'gantry.cost_usd': served?.costUsd,
    'gantry.ttft_ms': ttftMs,
  };
}
