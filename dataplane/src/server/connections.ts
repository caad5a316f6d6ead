/**
 * Guards a listener's sockets (the public one's, and the admin port's with its own, smaller
 * cap). A cap bounds open connections (so file descriptors
 * cannot run out and take the process down); at the cap a new connection evicts the one that
 * has been unproductive longest (idle keep-alive, or a request still being received) rather
 * than being refused, so held-open sockets cannot lock real clients out. Draining (shutdown)
 * closes each connection as soon as it has no response in progress.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { GatewayError } from '../errors.ts';

/** What eviction needs to know about a connection's current request, if any. */
export interface ConnectionUse {
  /** The request being received or answered; undefined between keep-alive requests. */
  readonly request: { readonly complete: boolean } | undefined;
}

/**
 * The connection to close to make room: the first, in least-recently-active order, that
 * is not answering a fully received request. Undefined when every one is serving.
 */
export function pickEvictable<K>(oldestFirst: Iterable<[K, ConnectionUse]>): K | undefined {
  for (const [key, use] of oldestFirst) if (!use.request?.complete) return key;
  return undefined;
}

interface Tracked {
  request: IncomingMessage | undefined;
  /** The response to `request`: the newest on the socket (pipelined ones answer in order). */
  response: ServerResponse | undefined;
  /** A response the drain told to say `close`, while no newer request had arrived behind it. */
  closing: ServerResponse | undefined;
  /** Requests on the socket not answered yet: the one on the wire and those pipelined behind it. */
  unanswered: number;
}

/** Requests past their connection's pipelining bound: answered 429 before any work. */
const pastBound = new WeakSet<IncomingMessage>();

/** Whether `request` arrived with more than the bound of requests unanswered ahead on its socket. */
export const isOverPipelined = (request: IncomingMessage): boolean => pastBound.has(request);

/** The answer to a request past the bound: the client's doing, so a 429 it can act on. */
export const overPipelined = (): GatewayError =>
  new GatewayError(
    'rate_limit_exceeded',
    'too many requests pipelined unanswered on this connection (--max-pipelined-requests): wait for answers, or open another connection',
  );

export class ConnectionGuard {
  /**
   * Insertion order is the order of last activity: a socket moves to the end when its use
   * changes. Each socket keeps one record for its life, moved and updated, and a finished
   * request is cleared from it. A new record per move (two per request) in this long-lived,
   * old-generation Map made the young-generation collector keep and promote each request's
   * whole object graph until the next full GC: 15 KB promoted per request at one connection,
   * 4.3 KB at 16, against 2.3 and 3.2 KB with one record per socket (--trace-gc-nvp;
   * docs/decisions.md, Memory).
   */
  private readonly open = new Map<Socket, Tracked>();
  private draining = false;
  evicted = 0;
  refused = 0;

  constructor(
    server: Server,
    private readonly max: number,
    /**
     * Whether the server serves upgrades (the public port's Realtime). Only then may the guard
     * listen for them: any 'upgrade' listener makes Node route every request with an Upgrade
     * header (curl --http2's h2c offer) there instead of to the HTTP handler, and a server with
     * no upgrade handler of its own would leave such a request unanswered and its socket unread.
     */
    upgrades: 'served' | 'none' = 'served',
    /**
     * Requests a socket may have unanswered. Node runs the handler of every pipelined request as
     * soon as it parses it, so one connection could otherwise start any number of upstream calls
     * at once; past the bound a request is answered 429 without work (in order, as pipelined
     * answers go). The guard never pauses reading itself: a read stopped inside a request lets
     * Node's header and request timeouts reset the connection with the answers it owes. Node's
     * own backpressure still pauses a socket once ~16 KB of answers (429s included) wait queued
     * behind an unanswered one, as it does for any pipelining client.
     */
    private readonly maxPipelined: number = Number.POSITIVE_INFINITY,
  ) {
    server.on('connection', (socket: Socket) => this.admit(socket));
    // Ahead of Fastify's own listener: some answers (a path it cannot decode) are written
    // synchronously inside it, and a draining connection must say `close` in their head too.
    server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => this.started(req, res));
    // An upgraded socket (a Realtime session) is busy until it closes: never evicted as idle,
    // and closed by its own protocol at shutdown rather than cut by the drain.
    if (upgrades === 'served')
      server.on('upgrade', (req: IncomingMessage) => {
        if (this.open.has(req.socket)) this.touch(req.socket, req, undefined);
      });
  }

  get size(): number {
    return this.open.size;
  }

  /** What the guard knows of `socket`'s current use; undefined once it is closed or evicted. */
  useOf(socket: Socket): ConnectionUse | undefined {
    return this.open.get(socket);
  }

  private admit(socket: Socket): void {
    if (this.open.size >= this.max) {
      const victim = pickEvictable(this.open);
      if (victim === undefined) {
        this.refused++;
        socket.destroy();
        return;
      }
      this.evicted++;
      this.forget(victim);
      victim.destroy();
    }
    this.open.set(socket, { request: undefined, response: undefined, closing: undefined, unanswered: 0 });
    socket.once('close', () => this.forget(socket));
  }

  private started(req: IncomingMessage, res: ServerResponse): void {
    const socket = req.socket;
    if (!this.open.has(socket)) return;
    const use = this.touch(socket, req, res);
    if (use && ++use.unanswered > this.maxPipelined) pastBound.add(req);
    // A response started while draining tells the client not to reuse the connection.
    if (this.draining) {
      res.shouldKeepAlive = false;
      // The drain's `close` moves to this newer answer: said by the one ahead, it would end the
      // connection before this one is written.
      const ahead = use?.closing;
      if (ahead && !ahead.headersSent) ahead.shouldKeepAlive = true;
      // This answer holds the close now, to hand on to any request pipelined behind it.
      if (use) use.closing = res;
    }
    res.once('close', () => {
      const now = this.open.get(socket);
      if (now) now.unanswered--;
      // With pipelining the next request may already be the socket's current one: it stays.
      if (now?.request !== req) return;
      this.touch(socket, undefined, undefined);
      if (this.draining) socket.destroySoon();
    });
  }

  /**
   * Shutdown: idle connections close now, busy ones when their response ends. A request in
   * flight (or pipelined behind one) whose answer has not begun is told to say `close`: only
   * the socket's newest, since an earlier answer saying it would end the connection before the
   * answers queued behind it, for requests already served. A pipelined answer Node has already
   * composed (queued behind a slower one) keeps its head; the connection still closes after it.
   */
  drain(): void {
    this.draining = true;
    for (const [socket, use] of this.open) {
      const res = use.response;
      if (!use.request) socket.destroySoon();
      else if (res && !res.headersSent && res.shouldKeepAlive) {
        res.shouldKeepAlive = false;
        use.closing = res;
      }
    }
  }

  private touch(
    socket: Socket,
    request: IncomingMessage | undefined,
    response: ServerResponse | undefined,
  ): Tracked | undefined {
    const use = this.open.get(socket);
    if (!use) return undefined;
    this.open.delete(socket);
    use.request = request;
    use.response = response;
    if (!response) use.closing = undefined;
    this.open.set(socket, use);
    return use;
  }

  private forget(socket: Socket): void {
    this.open.delete(socket);
  }
}
