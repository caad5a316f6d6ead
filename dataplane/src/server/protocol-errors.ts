/**
 * Errors raised before a request reaches Fastify's routing: Node's HTTP parser (431 for
 * oversized headers, 400 for a malformed request line, 408 when the request timeout fires)
 * and Fastify's URL decoding. They get the SPEC.md error body like every other answer.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { GatewayError } from '../errors.ts';

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

export function rawErrorResponse(error: GatewayError): string {
  const body = JSON.stringify(error.toBody());
  const extra = Object.entries(error.headers).map(([k, v]) => `${k}: ${v}\r\n`);
  return (
    `HTTP/1.1 ${error.status} ${statusText(error.status)}\r\n` +
    extra.join('') +
    'Content-Type: application/json; charset=utf-8\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    'Connection: close\r\n\r\n' +
    body
  );
}

const statusText = (status: number): string =>
  ({
    400: 'Bad Request',
    405: 'Method Not Allowed',
    408: 'Request Timeout',
    431: 'Request Header Fields Too Large',
  })[status] ?? 'Error';

/**
 * A CONNECT request: Node hands it to a 'connect' listener and, without one, drops the
 * socket with no answer at all. The gateway is no forward proxy; it says so.
 */
export function onConnectMethod(_req: IncomingMessage, socket: Duplex): void {
  const error = new GatewayError('method_not_allowed', 'CONNECT is not served: this is not a forward proxy', {
    headers: { Allow: 'GET, HEAD, POST' },
  });
  if (socket.writable) socket.write(rawErrorResponse(error));
  socket.destroy();
}

/** Fastify's `clientErrorHandler`: the connection cannot be trusted after a parse error, so it is closed. */
export function onClientError(err: Error & { code?: string }, socket: Socket): void {
  // A reset socket has nobody to answer.
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  // Written then destroyed, as Node's own handler does: the small answer leaves in one write.
  if (socket.writable) socket.write(rawErrorResponse(parserError(err.code)));
  socket.destroy();
}
