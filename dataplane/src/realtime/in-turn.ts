/**
 * Node's HTTP server emits 'upgrade' as soon as its parser has read an upgrade request, even
 * when answers to requests pipelined before it on the same connection are still owed (the
 * oldest attached to the socket, the rest queued behind it). Answering it at once would put a
 * head (a refusal, even a 101) ahead of theirs, where the client takes it for an earlier
 * request's answer; handing it back to the HTTP handler would throw ERR_HTTP_SOCKET_ASSIGNED
 * out of the parser, uncaught. So an upgrade waits its turn, as a server answering pipelined
 * requests in order does.
 */
import type { ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

/** The response Node has attached to `socket` (its own field, as protocol-errors.ts reads it). */
const attached = (socket: Duplex): ServerResponse | null | undefined =>
  (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;

/**
 * Runs `serve` once no earlier response is owed on `socket`: now, or when the last of them has
 * ended (a queued one is attached as the one before it finishes). If the connection ends with
 * them (a response that closes it, a client that leaves), the upgrade is never served.
 */
export function inTurn(socket: Duplex, serve: () => void): void {
  const owed = attached(socket);
  if (!owed) return serve();
  // 'close' follows Node's own 'finish' handling, which attaches the next queued response.
  owed.once('close', () => {
    if (socket.destroyed || !socket.writable) return;
    inTurn(socket, serve);
  });
}
