/**
 * whenQueuedSocketCloses on a plain Node server: a long keep-alive connection with many
 * pipelined requests keeps one 'close' listener on its socket, and forgets each response
 * once it went out; a request alone on its connection registers nothing.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { queuedOn, whenQueuedSocketCloses } from '../../dataplane/src/server/queued-close.ts';
import { until } from '../harness/gateway-spawn.ts';
import { parseAnswers, RawConnection } from '../harness/raw-http.ts';

let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

const get = (path: string): string => `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`;

/** A server that registers every queued response and answers once `batch` requests arrived. */
const start = async (
  seen: (socket: Socket, response: ServerResponse) => void,
  left: () => void,
  batch = 1,
) => {
  const held: ServerResponse[] = [];
  server = createServer((req, res) => {
    if (res.socket === null) whenQueuedSocketCloses(req.socket, res, left);
    seen(req.socket, res);
    held.push(res);
    if (held.length === batch) for (const r of held.splice(0)) r.end('ok');
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as { port: number };
  return `http://127.0.0.1:${port}`;
};

describe('whenQueuedSocketCloses', () => {
  it('keeps one listener per socket over many pipelined requests and forgets those answered', async () => {
    const listeners: number[] = [];
    let socket: Socket | undefined;
    let leaves = 0;
    let queuedMost = 0;
    const url = await start(
      (s) => {
        socket = s;
        listeners.push(s.listenerCount('close'));
        queuedMost = Math.max(queuedMost, queuedOn(s));
      },
      () => leaves++,
      40,
    );
    const c = new RawConnection(url).send(Array.from({ length: 40 }, (_, i) => get(`/${i}`)).join(''));
    await c.receive((t) => parseAnswers(t).length === 40);
    // They did queue: several waited behind the one being answered at the same time.
    expect(queuedMost).toBeGreaterThan(1);
    // The first request had the socket to itself; every later one shares a single listener.
    expect(new Set(listeners.slice(1)).size).toBe(1);
    expect(listeners[1]! - listeners[0]!).toBeLessThanOrEqual(1);
    expect(queuedOn(socket!)).toBe(0);
    c.close();
    await new Promise<void>((resolve) =>
      socket!.destroyed ? resolve() : socket!.once('close', () => resolve()),
    );
    expect(leaves).toBe(0);
  });

  it('calls leave for each response still queued when the client closes, once', async () => {
    let leaves = 0;
    let socket: Socket | undefined;
    let arrived = 0;
    const url = await start(
      (s) => {
        socket = s;
        arrived++;
      },
      () => leaves++,
      Infinity,
    );
    const c = new RawConnection(url).send(get('/a') + get('/b') + get('/c'));
    await until(() => arrived === 3);
    c.close();
    await new Promise<void>((resolve) =>
      socket!.destroyed ? resolve() : socket!.once('close', () => resolve()),
    );
    // '/a' had the socket (its own response closes); '/b' and '/c' were queued behind it.
    expect(leaves).toBe(2);
    expect(queuedOn(socket!)).toBe(0);
  });

  it('a request alone on its connection registers nothing', async () => {
    const counts: number[] = [];
    const url = await start(
      (s) => counts.push(s.listenerCount('close'), queuedOn(s)),
      () => undefined,
    );
    const c = new RawConnection(url).send(get('/a'));
    await c.receive((t) => parseAnswers(t).length === 1);
    c.send(get('/b'));
    await c.receive((t) => parseAnswers(t).length === 2);
    expect(counts[0]).toBe(counts[2]);
    expect([counts[1], counts[3]]).toEqual([0, 0]);
    c.close();
  });
});
