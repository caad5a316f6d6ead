/**
 * Errors raised before a request reaches Fastify's routing: Node's HTTP parser (431 for
 * oversized headers, 400 for a malformed request line, 408 when the request timeout fires)
 * and CONNECT. They get the SPEC.md error body and a request id like every other answer.
 */
import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { ResponseHeaders } from '../brand.ts';
import { GatewayError } from '../errors.ts';
import { LogSampler } from './log-sampler.ts';
import { REQUEST_ID_HEADER } from './routes/headers.ts';

/** Any client can cause these at will: one warn line per interval, each answer at debug. */
const WARN_EVERY_MS = 10_000;

/** Node's error codes → what the client is told; anything else the parser rejects is a 400. */
export function parserError(code: string | undefined): GatewayError {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return new GatewayError('headers_too_large', 'request headers exceed the size limit');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new GatewayError('request_timeout', 'the request was not received in time');
    default:
      return new GatewayError('invalid_request_error', 'malformed HTTP request');
  }
}

/**
 * A whole HTTP answer in SPEC.md's shape, written straight to a socket that has no Fastify
 * reply (parser errors, CONNECT, a refused Realtime upgrade); the connection closes after it.
 */
export function rawErrorResponse(error: GatewayError, requestId: string): string {
  const body = JSON.stringify(error.toBody());
  const headers: Record<string, string> = {
    ...error.headers,
    [ResponseHeaders.requestId]: requestId,
    [REQUEST_ID_HEADER]: requestId,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(body)),
    Connection: 'close',
  };
  const head = [
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? 'Error'}`,
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v.replace(/[\r\n]/g, ' ')}`),
  ];
  return `${head.join('\r\n')}\r\n\r\n${body}`;
}

/** A CONNECT request: the gateway is no forward proxy, and says so. */
export const connectRefused = (): GatewayError =>
  new GatewayError('method_not_allowed', 'CONNECT is not served: this is not a forward proxy', {
    headers: { Allow: 'GET, HEAD, POST' },
  });

/** What is known of the response under way on a socket when its parser fails. */
export interface ResponseUnderWay {
  headersSent: boolean;
  /** Whether its request had been received whole (a later, pipelined request failed then). */
  requestComplete: boolean;
}

/**
 * Whether a raw answer may be written for a parse error. Only when no response is under way,
 * or the error is about that response's own request (its body still arriving: a 408, a bad
 * chunk) and nothing of its answer has gone out. Otherwise a head would land inside a started
 * answer, or ahead of one the client would then take it for.
 */
export function mayAnswer(underWay: ResponseUnderWay | undefined): boolean {
  return underWay === undefined || (!underWay.headersSent && !underWay.requestComplete);
}

/**
 * The response Node's HTTP server has attached to `socket`, if one is under way. `_httpMessage`
 * is Node's own field (its default clientError handler reads it); a pipelined response waits
 * in a queue until the one before it finishes, so the attached one is the oldest unfinished.
 */
function responseUnderWay(socket: Duplex): ResponseUnderWay | undefined {
  const res = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (!res) return undefined;
  return { headersSent: res.headersSent, requestComplete: res.req.complete };
}

/** The two log calls these answers make; Fastify's logger (pino, or its no-op) has both. */
export interface EdgeLog {
  warn(fields: object, msg: string): void;
  debug(fields: object, msg: string): void;
}

export interface PreRoutingAnswers {
  /**
   * Fastify's `clientErrorHandler`, which Fastify calls with `this` bound to the instance.
   * The connection cannot be trusted after a parse error, so it is closed.
   */
  onClientError(this: { log: EdgeLog }, err: Error & { code?: string }, socket: Socket): void;
  /**
   * A listener for the server's 'connect' event: without one, Node drops a CONNECT
   * request's socket with no answer at all.
   */
  onConnect(log: EdgeLog): (req: IncomingMessage, socket: Duplex) => void;
}

/**
 * No request object exists yet, so each answer gets a fresh id (a client's own x-request-id
 * sits in headers that failed to parse) in both id headers and in its log line.
 */
export function preRoutingAnswers(sampler = new LogSampler(WARN_EVERY_MS)): PreRoutingAnswers {
  // Both kinds of line share the sampler: together they are what a client can cause at will.
  const report = (log: EdgeLog, fields: object, msg: string): void => {
    const quiet = sampler.take();
    if (quiet === undefined) log.debug(fields, msg);
    else log.warn({ ...fields, quietSinceLast: quiet }, msg);
  };
  const answer = (log: EdgeLog, socket: Duplex, error: GatewayError, cause: string | undefined): void => {
    const requestId = randomUUID();
    const remoteAddress = (socket as Partial<Socket>).remoteAddress;
    // Written then destroyed, as Node's own handler does: the small answer leaves in one write.
    if (socket.writable) socket.write(rawErrorResponse(error, requestId));
    socket.destroy();
    const fields = { requestId, status: error.status, type: error.type, cause, remoteAddress };
    report(log, fields, 'answered before routing');
  };
  // Either kind of raw answer, when one may go out on this socket (mayAnswer); else it closes.
  const answerOrClose = (
    log: EdgeLog,
    socket: Duplex,
    error: GatewayError,
    cause: string | undefined,
  ): void => {
    if (mayAnswer(responseUnderWay(socket))) return answer(log, socket, error, cause);
    socket.destroy();
    const fields = { status: error.status, cause, remoteAddress: (socket as Partial<Socket>).remoteAddress };
    report(log, fields, 'connection closed unanswered: a response was under way on it');
  };
  return {
    onClientError(err, socket) {
      // A reset socket has nobody to answer.
      if (err.code === 'ECONNRESET' || socket.destroyed) return;
      answerOrClose(this.log, socket, parserError(err.code), err.code);
    },
    // A CONNECT pipelined behind a request still being served must not answer ahead of it.
    onConnect: (log) => (_req, socket) => answerOrClose(log, socket, connectRefused(), 'CONNECT'),
  };
}
