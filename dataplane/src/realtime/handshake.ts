/**
 * The parts of a Realtime upgrade decided before any WebSocket exists: which key the client
 * presents, which subprotocol to answer, and the HTTP refusal written on the raw socket.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Duplex } from 'node:stream';
import { GatewayError, invalidParam } from '../errors.ts';
import { presentedKey } from '../server/auth.ts';
import { rawErrorResponse } from '../server/protocol-errors.ts';

/** Browsers cannot set headers on a WebSocket, so OpenAI's browser form carries the key as a subprotocol. */
const KEY_PROTOCOL = 'openai-insecure-api-key.';

export function offeredProtocols(headers: IncomingHttpHeaders): string[] {
  const raw = headers['sec-websocket-protocol'];
  if (typeof raw !== 'string') return [];
  return raw
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
}

/** The header key when there is one, else the subprotocol key, else undefined (a 401). */
export function realtimeKey(headers: IncomingHttpHeaders): string | undefined {
  const fromHeader = presentedKey(headers);
  if (fromHeader !== undefined) return fromHeader;
  const protocol = offeredProtocols(headers).find((p) => p.startsWith(KEY_PROTOCOL));
  return protocol?.slice(KEY_PROTOCOL.length);
}

/**
 * The subprotocol to accept: `realtime` when offered (what OpenAI answers), else the first one
 * offered that is not a credential; never the key, which would otherwise be echoed back.
 */
export function chosenProtocol(offered: ReadonlySet<string>): string | false {
  if (offered.has('realtime')) return 'realtime';
  for (const p of offered) if (!p.startsWith(KEY_PROTOCOL)) return p;
  return false;
}

/** RFC 6455 §4.1: the key is the base64 of 16 bytes (22 characters and `==`). */
const WEBSOCKET_KEY = /^[A-Za-z0-9+/]{22}==$/;

/** RFC 7230 section 3.2.6: the characters of a token, which is what each subprotocol name is. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * Why a `Sec-WebSocket-Protocol` value is not RFC 6455's comma list of distinct tokens, or
 * undefined when it is. The same grammar `ws` enforces at the upgrade (its 400 is plain text
 * and comes after the upstream opened), checked here first; a test holds the two to agreement.
 */
export function subprotocolProblem(value: string): string | undefined {
  if (/^[ \t]/.test(value)) return 'starts with white space';
  // Positions, never the names: a browser's list carries its API key as one of them.
  const seen = new Map<string, number>();
  for (const [i, raw] of value.split(',').entries()) {
    const name = raw.replace(/^[ \t]+|[ \t]+$/g, '');
    if (name === '') return `entry ${i + 1} of the comma list is empty`;
    if (!TOKEN.test(name)) return `entry ${i + 1} is not a token (RFC 7230 token characters only)`;
    const first = seen.get(name);
    if (first !== undefined) return `entry ${i + 1} repeats entry ${first}`;
    seen.set(name, i + 1);
  }
  return undefined;
}

/**
 * The handshake `ws` would refuse after the upstream is already open (or, for HTTP/1.0, wrongly
 * accept), refused first so a malformed upgrade never costs an upstream connection, a session
 * slot or a request.
 */
export function handshakeProblem(
  headers: IncomingHttpHeaders,
  httpVersion: string,
): GatewayError | undefined {
  // RFC 6455 §4.1: the opening handshake is an HTTP/1.1 request (or later).
  if (httpVersion === '1.0' || httpVersion === '0.9')
    return new GatewayError(
      'invalid_request_error',
      `a WebSocket upgrade needs HTTP/1.1 (RFC 6455); this request is HTTP/${httpVersion}`,
    );
  const key = headers['sec-websocket-key'];
  if (typeof key !== 'string' || !WEBSOCKET_KEY.test(key.trim()))
    return invalidParam(
      'Sec-WebSocket-Key',
      'required on a WebSocket upgrade: the base64 of 16 random bytes',
    );
  if (headers['sec-websocket-version'] !== '13') {
    const error = invalidParam('Sec-WebSocket-Version', 'must be 13 (RFC 6455)');
    error.headers['sec-websocket-version'] = '13';
    return error;
  }
  const protocols = headers['sec-websocket-protocol'];
  const problem = protocols === undefined ? undefined : subprotocolProblem(protocols);
  if (problem !== undefined) return invalidParam('Sec-WebSocket-Protocol', problem);
  return undefined;
}

/** A refused upgrade: a plain HTTP answer in SPEC.md's shape, then the socket closes. */
export function refuseUpgrade(socket: Duplex, error: GatewayError, requestId: string): void {
  if (!socket.destroyed) socket.end(rawErrorResponse(error, requestId));
}
