/**
 * A client closing a keep-alive connection with pipelined requests in flight. Node writes
 * one response at a time and queues the responses of later requests until the socket is
 * theirs: a queued response has no socket, so when the client leaves it never closes, and the
 * request it answers would run to the end upstream and be charged for an answer nobody reads.
 * The socket's own 'close' is watched instead, with one listener per socket however many
 * requests queue on it over a long connection.
 */
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** Called when the socket closes before the response it was registered for went out. */
type Leave = () => void;

const waiting = new WeakMap<Socket, Map<ServerResponse, Leave>>();

/**
 * Calls `leave` if `socket` closes while `response` is still queued on it (or at once if it
 * already has). Once `response` closes, which it does when it was written out, it is forgotten.
 */
export function whenQueuedSocketCloses(socket: Socket, response: ServerResponse, leave: Leave): void {
  if (socket.destroyed) return gone(response, leave);
  let queued = waiting.get(socket);
  if (!queued) {
    const fresh = new Map<ServerResponse, Leave>();
    queued = fresh;
    waiting.set(socket, fresh);
    socket.once('close', () => {
      waiting.delete(socket);
      for (const [r, l] of fresh) gone(r, l);
      fresh.clear();
    });
  }
  const registered = queued;
  registered.set(response, leave);
  response.once('close', () => registered.delete(response));
}

/**
 * The client left `response`'s request. A response still queued will never get the socket, so
 * it is made to look as one whose socket closed under it: destroyed, then 'close'. Everything
 * waiting on it (a stream writer's 'drain', the in-flight gauge, the connection guard) then
 * ends as it does for a client that leaves a response on the wire. The response on the wire
 * gets its 'close' from Node.
 */
function gone(response: ServerResponse, leave: Leave): void {
  leave();
  if (response.socket !== null || response.destroyed) return;
  response.destroy();
  response.emit('close');
}

/** How many responses wait on `socket` (tests: the set must empty as they go out). */
export const queuedOn = (socket: Socket): number => waiting.get(socket)?.size ?? 0;
