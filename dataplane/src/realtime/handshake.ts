/**
 * The parts of a Realtime upgrade decided before any WebSocket exists: which key the client
 * presents, which subprotocol to answer, and the HTTP refusal written on the raw socket.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Duplex } from 'node:stream';
import { invalidParam, type GatewayError } from '../errors.ts';
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

/**
 * The handshake headers `ws` would refuse after the upstream is already open, refused first
 * so a malformed upgrade never costs an upstream connection, a session slot or a request.
 */
export function handshakeProblem(headers: IncomingHttpHeaders): GatewayError | undefined {
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
  return undefined;
}

/** A refused upgrade: a plain HTTP answer in SPEC.md's shape, then the socket closes. */
export function refuseUpgrade(socket: Duplex, error: GatewayError, requestId: string): void {
  if (!socket.destroyed) socket.end(rawErrorResponse(error, requestId));
}
