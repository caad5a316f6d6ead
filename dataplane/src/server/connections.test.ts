import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { describe, expect, it } from 'vitest';
import { closesConnection } from './app.ts';
import { ConnectionGuard, isOverPipelined, pickEvictable, type ConnectionUse } from './connections.ts';
import { nodeServerTimeouts } from './limits.ts';

const idle: ConnectionUse = { request: undefined };
const receiving: ConnectionUse = { request: { complete: false } };
const serving: ConnectionUse = { request: { complete: true } };

describe('pickEvictable', () => {
  it('takes the least recently active connection that is not serving a received request', () => {
    expect(
      pickEvictable([
        ['stream', serving],
        ['slow-body', receiving],
        ['idle', idle],
      ]),
    ).toBe('slow-body');
    expect(
      pickEvictable([
        ['a', serving],
        ['idle', idle],
      ]),
    ).toBe('idle');
  });

  it('never evicts a response in progress', () => {
    expect(
      pickEvictable([
        ['a', serving],
        ['b', serving],
      ]),
    ).toBeUndefined();
  });
});

describe('ConnectionGuard', () => {
  it('keeps one record per connection and lets go of each request when its response closes', async () => {
    const server = createServer();
    const guard = new ConnectionGuard(server, 8);
    const records = new Set<ConnectionUse>();
    const seenDuring: boolean[] = [];
    // Each resolves with what the guard holds for the socket once the response has closed.
    const afterClose: Promise<ConnectionUse['request']>[] = [];
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      const use = guard.useOf(req.socket);
      if (use) records.add(use);
      seenDuring.push(use?.request === req);
      // Registered after the guard's own listener, so it sees what the guard left.
      afterClose.push(once(res, 'close').then(() => guard.useOf(req.socket)?.request));
      res.end('ok');
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const pool = new Pool(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, { connections: 1 });
    try {
      const requests = 50;
      for (let i = 0; i < requests; i++) {
        const res = await pool.request({ method: 'GET', path: '/' });
        await res.body.text();
      }
      const left = await Promise.all(afterClose);
      expect(guard.size).toBe(1);
      expect(seenDuring).toEqual(Array.from({ length: requests }, () => true));
      expect(left).toEqual(Array.from({ length: requests }, () => undefined));
      // One keep-alive connection, one record for all its requests, not a new one per request
      // (which kept finished requests alive for the young-generation GC: ConnectionGuard.open).
      expect(records.size).toBe(1);
    } finally {
      await pool.close();
      server.close();
    }
  });
});

describe('ConnectionGuard with pipelined requests', () => {
  it('keeps the next request as the use of the connection when the previous response closes', async () => {
    const server = createServer();
    const guard = new ConnectionGuard(server, 8);
    const requests: Array<{ req: IncomingMessage; res: ServerResponse }> = [];
    let arrived!: () => void;
    const bothArrived = new Promise<void>((resolve) => (arrived = resolve));
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      requests.push({ req, res });
      if (requests.length === 2) arrived();
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
    try {
      await once(socket, 'connect');
      socket.write('GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n');
      await bothArrived;
      const [first, second] = requests as [(typeof requests)[0], (typeof requests)[0]];
      const firstClosed = once(first.res, 'close');
      first.res.end('one');
      await firstClosed;
      // The second request is still unanswered: not idle, so neither evictable nor drained.
      expect(guard.useOf(second.req.socket)?.request).toBe(second.req);
      const secondClosed = once(second.res, 'close');
      second.res.end('two');
      await secondClosed;
      expect(guard.useOf(second.req.socket)?.request).toBeUndefined();
    } finally {
      socket.destroy();
      server.close();
    }
  });
});

describe('nodeServerTimeouts', () => {
  it('keeps headers within the receive timeout and checks often enough to enforce both', () => {
    const t = nodeServerTimeouts({
      receiveTimeoutMs: 1_000,
      headersTimeoutMs: 10_000,
      keepAliveTimeoutMs: 65_000,
      maxConnections: 1,
      adminMaxConnections: 1,
      maxPipelinedRequests: 1,
    });
    expect(t).toEqual({
      requestTimeout: 1_000,
      headersTimeout: 1_000,
      keepAliveTimeout: 65_000,
      connectionsCheckingInterval: 100,
    });
    const defaults = nodeServerTimeouts({
      receiveTimeoutMs: 30_000,
      headersTimeoutMs: 10_000,
      keepAliveTimeoutMs: 65_000,
      maxConnections: 1,
      adminMaxConnections: 1,
      maxPipelinedRequests: 1,
    });
    expect(defaults.connectionsCheckingInterval).toBe(1_000);
  });
});

describe('closesConnection', () => {
  it('closes after answers that leave the body unread by an unauthenticated caller', () => {
    expect(closesConnection(401, false)).toBe(true);
    expect(closesConnection(413, true)).toBe(true);
    expect(closesConnection(403, false)).toBe(true);
    expect(closesConnection(403, true)).toBe(false); // a guardrail block: the caller is known
    expect(closesConnection(400, true)).toBe(false);
    expect(closesConnection(429, true)).toBe(false);
  });
});

/** A plain server behind a guard, its sockets' answers read raw. */
async function guarded(maxPipelined: number, handler: (req: IncomingMessage, res: ServerResponse) => void) {
  const server = createServer();
  const guard = new ConnectionGuard(server, 8, 'none', maxPipelined);
  server.on('request', handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  const socket = connect(port, '127.0.0.1');
  let text = '';
  socket.setEncoding('utf8').on('data', (d: string) => (text += d));
  await once(socket, 'connect');
  const answers = () =>
    [...text.matchAll(/HTTP\/1\.1 (\d{3})[^]*?connection: (\S+)\r\n/gi)].map((m) => [m[1], m[2]]);
  const close = () => {
    socket.destroy();
    server.closeAllConnections();
    server.close();
  };
  return { guard, socket, answers, close };
}

const get = (path: string) => `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`;

describe('ConnectionGuard pipelining', () => {
  it('marks each request past the bound of unanswered ones on its socket, and forgets them as answers go', async () => {
    const over: boolean[] = [];
    const pending: ServerResponse[] = [];
    const g = await guarded(2, (req, res) => {
      over.push(isOverPipelined(req));
      pending.push(res);
    });
    try {
      g.socket.write([1, 2, 3, 4, 5].map((i) => get(`/${i}`)).join(''));
      await until(() => over.length === 5);
      expect(over).toEqual([false, false, true, true, true]);
      for (const res of pending.splice(0)) res.end('ok');
      await until(() => g.answers().length === 5);
      // Every answer went out: the socket has none unanswered, so the next request is within.
      g.socket.write(get('/6'));
      await until(() => over.length === 6);
      expect(over[5]).toBe(false);
      pending.splice(0).forEach((res) => res.end('ok'));
    } finally {
      g.close();
    }
  });

  it('while draining, hands the close on to each request pipelined behind: every answer is written', async () => {
    let slow: ServerResponse | undefined;
    const seen: string[] = [];
    const g = await guarded(32, (req, res) => {
      seen.push(req.url!);
      // Answered on a later turn, as the gateway answers (after its upstream): a head composed
      // at once would say `close` before the request behind it was parsed.
      if (req.url === '/slow') slow = res;
      else setImmediate(() => res.end('ok'));
    });
    try {
      g.socket.write(get('/slow'));
      await until(() => slow !== undefined);
      g.guard.drain();
      g.socket.write(get('/two') + get('/three'));
      await until(() => seen.length === 3);
      slow!.end('ok');
      await once(g.socket, 'close');
      expect(g.answers()).toEqual([
        ['200', 'keep-alive'],
        ['200', 'keep-alive'],
        ['200', 'close'],
      ]);
    } finally {
      g.close();
    }
  });
});

async function until(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met within 5 s');
    await new Promise((r) => setTimeout(r, 10));
  }
}
