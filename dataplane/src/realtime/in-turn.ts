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

/**
 * What a waiting upgrade keeps of what its client sends meanwhile (early WebSocket frames);
 * more is not a client waiting for its answers, and the connection is closed.
 */
export const MAX_WAITING_BYTES = 64 * 1024;

/** The response Node has attached to `socket` (its own field, as protocol-errors.ts reads it). */
const attached = (socket: Duplex): ServerResponse | null | undefined =>
  (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;

/**
 * Runs `serve` once no earlier response is owed on `socket`: now, or when the last of them has
 * ended (a queued one is attached as the one before it finishes). If the connection ends with
 * them (a response that closes it, a client that leaves), the upgrade is never served.
 */
export function inTurn(socket: Duplex, serve: () => void): void {
  if (!attached(socket)) return serve();
  const reading = keepReading(socket);
  waitFor(socket, () => {
    reading.stop();
    serve();
  });
}

function waitFor(socket: Duplex, serve: () => void): void {
  const owed = attached(socket);
  if (!owed) return serve();
  // 'close' follows Node's own 'finish' handling, which attaches the next queued response.
  owed.once('close', () => {
    if (socket.destroyed || !socket.writable) return;
    waitFor(socket, serve);
  });
}

/**
 * Node's parser let go of the socket at the upgrade, so nothing reads it while the earlier
 * answers are owed: a client that leaves would go unseen, and the requests it left would run
 * to the end and be charged. Reading here sees it leave (its FIN ends the connection, as
 * Node's does for a client gone mid-request, and the requests in flight are aborted); what it
 * sends meanwhile is kept, capped, and put back for whoever serves the upgrade.
 */
function keepReading(socket: Duplex): { stop(): void } {
  const kept: Buffer[] = [];
  let bytes = 0;
  const onReadable = (): void => {
    for (let chunk = socket.read() as Buffer | null; chunk !== null; chunk = socket.read() as Buffer | null) {
      bytes += chunk.length;
      if (bytes > MAX_WAITING_BYTES) return void socket.destroy();
      kept.push(chunk);
    }
  };
  const onEnd = (): void => void socket.destroy();
  socket.on('readable', onReadable);
  socket.once('end', onEnd);
  return {
    stop() {
      // Removing the last 'readable' listener leaves the stream neither flowing nor paused, so
      // a later 'data' listener (ws's) starts it flowing again.
      socket.off('readable', onReadable);
      socket.off('end', onEnd);
      if (kept.length > 0) socket.unshift(Buffer.concat(kept));
    },
  };
}
