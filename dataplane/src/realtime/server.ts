/**
 * `GET /v1/realtime` as a WebSocket: everything a request owes the gateway happens on the raw
 * upgrade, before any WebSocket exists — authentication (the Authorization header, or the
 * browser's `openai-insecure-api-key.<key>` subprotocol), model access and capability, the
 * per-key session cap, the rate limit and a budget check, and the upstream connection through
 * the router (with failover). Any refusal is a plain HTTP answer in SPEC.md's shape; only a
 * session with an open upstream is upgraded.
 */
import type { FastifyBaseLogger } from 'fastify';
import { randomUUID } from 'node:crypto';
import { ServerResponse, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { ResponseHeaders } from '../brand.ts';
import type { ConfigStore } from '../config/store.ts';
import type { Deployment, KeyRecord, Snapshot, TenantRecord } from '../config/snapshot.ts';
import type { ClientSecret } from '../stores/realtime-secrets/types.ts';
import { isClientSecret } from './secrets.ts';
import { GatewayError, invalidParam } from '../errors.ts';
import type { Metrics } from '../metrics.ts';
import { accessibleRoute, freshMetering, type RequestContext } from '../pipeline/context.ts';
import { routeRequest, type PipelineDeps } from '../pipeline/forward.ts';
import { settle } from '../pipeline/settlement.ts';
import { attemptHeaders, type AttemptLog } from '../router/router.ts';
import { authenticate, hashKey } from '../server/auth.ts';
import { checkModelName } from '../server/model-name.ts';
import { notAccepting } from '../server/closing.ts';
import { normaliseError } from '../server/errors.ts';
import type { OtlpTracer } from '../telemetry/otlp.ts';
import { acceptedRequestId, parseTraceparent, upstreamHeaders } from '../telemetry/trace-context.ts';
import { admitRealtime } from './admission.ts';
import { checkGuards } from './guard.ts';
import { chosenProtocol, handshakeProblem, realtimeKey, refuseUpgrade } from './handshake.ts';
import { inTurn } from './in-turn.ts';
import type { RealtimeLimits } from './limits.ts';
import { RealtimeSession, type SessionSummary } from './session.ts';
import { SessionCount } from './session-count.ts';
import { ScanBudgets } from './scan-budget.ts';
import { scanAllowance } from './scan-share.ts';
import { openUpstream, servesRealtime, speaksRealtime } from './upstream.ts';
import { countUnknownRefusal } from '../pipeline/unknown-model.ts';

/** `fn` once, however many paths end up calling it. */
const once = (fn: () => void): (() => void) => {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    fn();
  };
};

export const REALTIME_PATH = '/v1/realtime';
const ROUTE = '/v1/realtime';

export interface RealtimeDeps {
  server: Server;
  config: ConfigStore;
  pipeline: PipelineDeps;
  metrics: Metrics;
  log: FastifyBaseLogger;
  limits: RealtimeLimits;
  shutdown: AbortSignal;
  tracer?: OtlpTracer | undefined;
}

const isWebSocketUpgrade = (req: IncomingMessage): boolean =>
  typeof req.headers.upgrade === 'string' && req.headers.upgrade.toLowerCase() === 'websocket';

/**
 * Listening for 'upgrade' takes every upgrade request away from the HTTP handler: those that
 * are not a Realtime WebSocket are handed back, answered once on a closing connection.
 */
function handBack(server: Server, req: IncomingMessage, socket: Duplex, head: Buffer): void {
  if (head.length > 0) socket.unshift(head);
  const res = new ServerResponse(req);
  res.shouldKeepAlive = false;
  res.assignSocket(socket as never);
  res.once('finish', () => socket.end());
  server.emit('request', req, res);
}

/** Who a session's guardrail scanning is counted for within its key (scan-share.ts). */
interface ScanHolder {
  id: string;
  /** As refusals name it. */
  name: string;
}

export class RealtimeProxy {
  readonly sessions = new SessionCount();
  private readonly wss: WebSocketServer;
  /** Headers each accepted upgrade answers with (the served deployment, rate limits). */
  private readonly extraHeaders = new WeakMap<IncomingMessage, Record<string, string>>();
  private readonly open = new Set<WebSocket>();
  /** Until their close completes: a session can end before its client answers the close frame. */
  private readonly sockets = new Set<WebSocket>();
  /**
   * Set by closeAll: an upgrade that comes due later (one that waited behind a pipelined
   * answer, or was still being admitted) would open a session the drain has already passed.
   */
  private closing = false;
  /** Open sessions, checked again on every config reload (caller.ts). */
  readonly sessionsOpen = new Set<RealtimeSession>();
  /**
   * Guardrail scanning per key, shared by the key's sessions (a new session is no new allowance
   * of the key's), each holder at most its share (a session, or a client secret's sessions).
   */
  readonly scanBudgets: ScanBudgets;

  constructor(private readonly deps: RealtimeDeps) {
    this.scanBudgets = new ScanBudgets(scanAllowance(deps.limits));
    deps.config.onReload(() => {
      for (const session of this.sessionsOpen) session.recheck();
    });
    this.wss = new WebSocketServer({
      noServer: true,
      maxPayload: deps.limits.maxMessageBytes,
      // Compression would let a small frame expand past maxPayload's intent and costs CPU per event.
      perMessageDeflate: false,
      handleProtocols: (offered) => chosenProtocol(offered),
    });
    this.wss.on('headers', (headers, req) => {
      for (const [k, v] of Object.entries(this.extraHeaders.get(req) ?? {})) headers.push(`${k}: ${v}`);
    });
    deps.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      socket.on('error', () => undefined);
      inTurn(socket, () => {
        const path = (req.url ?? '/').split('?', 1)[0];
        if (path !== REALTIME_PATH || req.method !== 'GET' || !isWebSocketUpgrade(req))
          return handBack(deps.server, req, socket, head);
        void this.accept(req, socket, head);
      });
    });
  }

  /** Open sessions on this pod (for tests and the drain). */
  get size(): number {
    return this.open.size;
  }

  /** The gateway's end of each open session's client socket (tests watch its backlog and reading). */
  get clients(): ReadonlySet<WebSocket> {
    return this.open;
  }

  private async accept(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const started = Date.now();
    const requestId = acceptedRequestId(req.headers['x-request-id']) ?? randomUUID();
    let ctx: RequestContext | undefined;
    let releaseSlot: (() => void) | undefined;
    let secretSession: Record<string, unknown> | undefined;
    try {
      if (this.closing) throw notAccepting();
      const malformed = handshakeProblem(req.headers, req.httpVersion);
      if (malformed) throw malformed;
      const who = await this.caller(req);
      ctx = this.context(req, socket, requestId, who);
      const asked = new URL(req.url ?? '/', 'http://gantry').searchParams.get('model');
      checkModelName('model', asked);
      const model = asked || who.secret?.model;
      if (!model) throw invalidParam('model', 'required as ?model=<model> on the Realtime URL');
      if (who.secret && model !== who.secret.model)
        throw new GatewayError(
          'permission_denied',
          `this client secret opens ${who.secret.model} only, not ${model}`,
          { param: 'model' },
        );
      ctx.usage = { endpoint: 'realtime', requestedModel: model, stream: true };
      secretSession = checkGuards(ctx, model, who.secret?.session);
      const route = accessibleRoute(ctx, model);
      if (!servesRealtime(route))
        throw new GatewayError(
          'invalid_request_error',
          `model ${model} does not support /v1/realtime (no deployment has the realtime capability on a provider that speaks the protocol)`,
          { param: 'model' },
        );
      const max = this.deps.limits.maxSessionsPerKey;
      const keyRef = `${ctx.tenant.name}/${ctx.key.id}`;
      if (!this.sessions.take(keyRef, max))
        throw new GatewayError(
          'rate_limit_exceeded',
          `this key already holds ${max} open Realtime sessions, the most one key may hold; close one first`,
        );
      releaseSlot = once(() => this.sessions.release(keyRef));
      await admitRealtime(this.deps.pipeline, ctx, route);
      const routed = await this.deps.pipeline.router.execute(
        { ...routeRequest(ctx, model, ['realtime']), filter: speaksRealtime },
        (d) => openUpstream(d, ctx!.upstreamHeaders, this.deps.limits.maxMessageBytes, ctx!.signal),
      );
      if (socket.destroyed) {
        routed.value.terminate();
        throw new GatewayError('client_closed_request', 'the client left before the session opened');
      }
      if (this.closing) {
        routed.value.terminate();
        throw notAccepting();
      }
      // A client secret is one end user: its sessions share one part of the key's scanning, so
      // reconnecting or opening more sessions with it gets that user no more. A session opened
      // with the key is its own holder, named by the context's id: always server-made (the
      // request id may be the caller's x-request-id, which two sessions can share).
      const scan: ScanHolder = who.secretHash
        ? { id: `secret:${who.secretHash}`, name: "this client secret's sessions" }
        : { id: `session:${ctx.id}`, name: 'this session' };
      this.upgrade(req, socket, head, ctx, model, routed, started, secretSession, scan, releaseSlot);
    } catch (err) {
      releaseSlot?.();
      const error = ctx
        ? await countUnknownRefusal(this.deps.pipeline.stores, ctx, normaliseError(err))
        : normaliseError(err);
      if (ctx) {
        Object.assign(error.headers, ctx.responseHeaders);
        await settle(this.deps.pipeline, ctx, { status: error.status, errorType: error.type, costUsd: 0 });
      }
      if (error.status >= 500) this.deps.log.warn({ err: error.message, requestId }, 'realtime refused');
      this.deps.metrics.answered(ROUTE, error.status, (Date.now() - started) / 1000);
      refuseUpgrade(socket, error, requestId);
    }
  }

  /**
   * Who is calling: an API key, or a client secret Gantry minted (which stands for the key
   * that minted it, for one model, while it lasts and while that key exists).
   */
  private async caller(req: IncomingMessage): Promise<{
    key: KeyRecord;
    tenant: TenantRecord;
    secret: ClientSecret | undefined;
    /** The secret's store id (its SHA-256, hex). */
    secretHash: string | undefined;
    snapshot: Snapshot;
  }> {
    const snapshot = this.deps.config.current();
    const presented = realtimeKey(req.headers);
    if (presented === undefined || !isClientSecret(presented))
      return { ...authenticate(snapshot, presented), secret: undefined, secretHash: undefined, snapshot };
    const secretHash = hashKey(presented).toString('hex');
    const secret = await this.deps.pipeline.stores.realtimeSecrets.get(secretHash);
    const key = secret && snapshot.keys.get(secret.keyHash);
    const tenant = key && snapshot.tenants.get(key.tenant);
    if (!secret || !key || !tenant || key.id !== secret.keyId)
      throw new GatewayError('authentication_error', 'invalid or expired client secret');
    return { key, tenant, secret, secretHash, snapshot };
  }

  /** The connect's context, as createContext builds one for HTTP; aborted if the socket goes first. */
  private context(
    req: IncomingMessage,
    socket: Duplex,
    requestId: string,
    who: { key: KeyRecord; tenant: TenantRecord; snapshot: Snapshot },
  ): RequestContext {
    const { key, tenant, snapshot } = who;
    const controller = new AbortController();
    const onClose = () => controller.abort();
    socket.once('close', onClose);
    const incoming = parseTraceparent(req.headers.traceparent, req.headers.tracestate);
    const trace = this.deps.tracer ? this.deps.tracer.begin(incoming) : incoming;
    const startedAt = Date.now();
    return {
      id: req.headers['x-request-id'] === requestId ? randomUUID() : requestId,
      requestId,
      snapshot,
      key,
      tenant,
      signal: controller.signal,
      startedAt,
      // Only the connect has a deadline; the session's own limits bound the rest.
      deadline: startedAt + 30_000,
      requestHeaders: req.headers,
      log: this.deps.log,
      ...freshMetering(),
      trace,
      upstreamHeaders: upstreamHeaders(requestId, trace),
    };
  }

  private upgrade(
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    ctx: RequestContext,
    model: string,
    routed: { value: WebSocket; deployment: Deployment; log: AttemptLog },
    started: number,
    initialSession: Record<string, unknown> | undefined,
    scan: ScanHolder,
    releaseSlot: () => void,
  ): void {
    const upstream = routed.value;
    this.extraHeaders.set(req, {
      ...ctx.responseHeaders,
      [ResponseHeaders.requestId]: ctx.requestId,
      'x-request-id': ctx.requestId,
      [ResponseHeaders.provider]: routed.deployment.name,
      ...attemptHeaders(routed.log),
    });
    // Until the upgrade completes the upstream and the slot are this connect's: `ws` refusing the
    // handshake (its own 400) or finding the client gone never calls back, and then both are let
    // go here, once, whichever of the two checks below sees it first.
    let handedOver = false;
    const abandon = () => {
      if (handedOver) return;
      handedOver = true;
      upstream.terminate();
      releaseSlot();
      this.extraHeaders.delete(req);
      const [status, errorType] = socket.destroyed
        ? [499, 'client_closed_request']
        : [400, 'invalid_request_error'];
      this.deps.metrics.answered(ROUTE, status, (Date.now() - started) / 1000);
      void settle(this.deps.pipeline, ctx, { status, errorType, costUsd: 0 }).catch(() => undefined);
    };
    socket.once('close', abandon);
    this.wss.handleUpgrade(req, socket, head, (client) => {
      socket.off('close', abandon);
      if (handedOver) return void client.terminate();
      handedOver = true;
      this.open.add(client);
      this.sockets.add(client);
      client.once('close', () => this.sockets.delete(client));
      this.deps.metrics.inflight.inc();
      // A session settles its responses as they finish, the last after the shutdown's
      // closeAll: the stores stay open until then. What it owes meanwhile is its responses'
      // (the shutdown logs it when the wait gives up).
      let sessionDone!: () => void;
      const ended = new Promise<void>((resolve) => (sessionDone = resolve));
      const session = new RealtimeSession({
        deps: this.deps.pipeline,
        ctx,
        config: () => this.deps.config.current(),
        client,
        upstream,
        deployment: routed.deployment,
        attempts: routed.log.attempts,
        model,
        initialSession,
        limits: this.deps.limits,
        scanBudget: this.scanBudgets.forHolder(`${ctx.tenant.name}/${ctx.key.id}`, scan.id),
        scanHolder: scan.name,
        shutdown: this.deps.shutdown,
        onEnd: (summary) => {
          this.sessionsOpen.delete(session);
          this.open.delete(client);
          this.deps.metrics.inflight.dec();
          releaseSlot();
          void this.ended(ctx, routed.deployment, summary, started).finally(sessionDone);
        },
      });
      this.deps.pipeline.settlements?.track(ended, () => session.owedUsd);
      this.sessionsOpen.add(session);
      session.start();
    });
    // Without verifyClient `ws` decides synchronously: no callback by now means no session.
    if (!handedOver) abandon();
  }

  /** One log line and one metric per session (each response counted its own tokens: hold.ts). */
  private async ended(
    ctx: RequestContext,
    deployment: Deployment,
    summary: SessionSummary,
    started: number,
  ): Promise<void> {
    const seconds = (Date.now() - started) / 1000;
    this.deps.metrics.answered(ROUTE, 101, seconds);
    this.deps.log.info(
      {
        route: ROUTE,
        status: 101,
        tenant: ctx.tenant.name,
        keyId: ctx.key.id,
        requestedModel: ctx.usage.requestedModel,
        deployment: deployment.name,
        ending: summary.ending,
        responses: summary.responses,
        tokens: summary.tokens,
        costUsd: summary.costUsd,
        latencyMs: Math.round(seconds * 1000),
      },
      'realtime session ended',
    );
  }

  /** Shutdown: sessions still open are closed as going away. */
  closeAll(): void {
    this.closing = true;
    for (const client of this.open) client.close(1001, 'gateway shutting down');
  }

  /** Drain deadline: a client that never answered the close frame is cut, not waited on for ws's 30 s. */
  terminateAll(): void {
    for (const client of this.sockets) client.terminate();
  }
}
