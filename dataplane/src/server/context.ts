import type { FastifyReply, FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import type { ConfigStore } from '../config/store.ts';
import type { RequestContext } from '../pipeline/context.ts';
import type { OtlpTracer } from '../telemetry/otlp.ts';
import { parseTraceparent, upstreamHeaders } from '../telemetry/trace-context.ts';
import { RequestAbort } from '../router/client-signal.ts';
import { authenticate, presentedKey } from './auth.ts';
import type { DrainAborts } from './drain-aborts.ts';
import { whenQueuedSocketCloses } from './queued-close.ts';

declare module 'fastify' {
  interface FastifyRequest {
    gantry: RequestContext | null;
    /** Set when the request was counted and logged (a stream may be reported twice). */
    gantryObserved: boolean;
  }
}

/**
 * Authenticate and build the request context. The snapshot is read once, here: the
 * request finishes on it whatever reloads happen meanwhile.
 */
export function createContext(
  request: FastifyRequest,
  reply: FastifyReply,
  config: ConfigStore,
  requestTimeoutMs: number,
  tracer: OtlpTracer | undefined,
  drain: DrainAborts,
): RequestContext {
  const snapshot = config.current();
  const { key, tenant } = authenticate(snapshot, presentedKey(request.headers), request.url);
  const abort = new RequestAbort();
  // The response closing before it finished means the client went away.
  // At the shutdown drain deadline the request is let go like a client that left: the
  // upstream call is aborted and what was produced is settled.
  const untrack = drain.track(abort);
  const response = reply.raw;
  const left = (): void => {
    untrack();
    if (!response.writableFinished) abort.abort();
  };
  // `on`: a response closes once (once() would wrap the listener on every request).
  response.on('close', left);
  // A pipelined request's response waits for the socket behind earlier ones and never closes
  // if the client leaves meanwhile: its socket's closing is the disconnect then. Only queued
  // responses pay for this; the socket check is all a request on its own connection costs.
  if (response.socket === null) whenQueuedSocketCloses(request.raw.socket, response, left);
  const startedAt = Date.now();
  const requestId = String(request.id);
  // A caller's id may repeat (client retries, a constant id): usage records and idempotency
  // keys are keyed by `id`, so that one is always ours and unique.
  const id = request.headers['x-request-id'] === requestId ? randomUUID() : requestId;
  const incoming = parseTraceparent(request.headers.traceparent, request.headers.tracestate);
  const trace = tracer ? tracer.begin(incoming) : incoming;
  return {
    id,
    requestId,
    snapshot,
    key,
    tenant,
    signal: abort,
    startedAt,
    deadline: startedAt + requestTimeoutMs,
    requestHeaders: request.headers,
    log: request.log,
    // freshMetering()'s fields, written out: the hot path builds one object, not two.
    responseHeaders: {},
    usage: {},
    admission: undefined,
    settled: false,
    promptTokens: undefined,
    served: undefined,
    trace,
    upstreamHeaders: upstreamHeaders(requestId, trace),
  };
}
