/**
 * Requests carrying an Upgrade header that Gantry does not speak (curl --http2's h2c offer,
 * a WebSocket to a path that has none) are plain HTTP requests: answered as such on both
 * ports, so they can neither hang, fill the admin port's connection cap nor hold up shutdown.
 */
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEY = 'sk-test-upgrade-headers';
const ADMIN_CAP = 3;

const h2c = (path: string, extra = '') =>
  `GET ${path} HTTP/1.1\r\nHost: x\r\n${extra}Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n` +
  'HTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n\r\n';
const websocket = (path: string) =>
  `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
  'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n';

interface Answer {
  status: number;
  head: string;
  body: string;
  socket: Socket;
}

const held: Socket[] = [];

/** Writes `text` on a new connection; resolves with the first complete answer (socket left open). */
function raw(url: string, text: string): Promise<Answer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    held.push(socket);
    let got = '';
    socket.setEncoding('latin1');
    socket.on('error', reject);
    socket.on('close', () => reject(new Error(`closed before an answer: ${JSON.stringify(got)}`)));
    socket.on('data', (chunk: string) => {
      got += chunk;
      const end = got.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = got.slice(0, end);
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? NaN);
      const body = got.slice(end + 4);
      if (!(body.length >= length)) return;
      socket.removeAllListeners('close');
      resolve({ status: Number(head.split(' ', 2)[1]), head, body, socket });
    });
    socket.write(text);
  });
}

/** Rejects if `promise` has not settled within `ms`: a hang fails the test instead of timing it out. */
const within = <T>(ms: number, what: string, promise: Promise<T>): Promise<T> =>
  Promise.race([
    promise,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms`)), ms).unref(),
    ),
  ]);

let stack: Stack | undefined;
afterEach(async () => {
  for (const s of held.splice(0)) s.destroy();
  await stack?.close();
  stack = undefined;
});

const start = async () =>
  (stack = await startStack(
    ([u]) =>
      [
        deployment({ name: 'm', model: 'gpt-4o-mini', baseUrl: fakeBase(u!) }),
        tenant('acme'),
        apiKey('k', KEY, 'acme'),
      ].join(''),
    { limits: { adminMaxConnections: ADMIN_CAP } },
  ));

describe('Upgrade headers on the admin port', () => {
  it('answers them as plain requests: past the cap /readyz still answers, and close() completes', async () => {
    const s = await start();
    const admin = s.gateway.adminUrl;
    // More upgrade requests than the cap, each kept open after its answer.
    const offers = [h2c('/healthz'), websocket('/healthz'), h2c('/readyz'), websocket('/metrics')];
    for (const offer of offers) {
      const answer = await within(3_000, 'admin upgrade request', raw(admin, offer));
      expect(answer.status).toBe(200);
    }
    const ready = await fetch(`${admin}/readyz`, { signal: AbortSignal.timeout(3_000) });
    expect(ready.status).toBe(200);
    const metrics = await within(3_000, 'h2c /metrics', raw(admin, h2c('/metrics')));
    expect(metrics.status).toBe(200);
    expect(metrics.body).toContain('gantry_');
    // The held sockets are idle keep-alive connections now, closed by the drain.
    await within(5_000, 'gateway close', s.close());
    stack = undefined;
  });
});

describe('Upgrade headers on the public port', () => {
  it('serves an h2c offer on GET /v1/models as a plain request', async () => {
    const s = await start();
    const answer = await within(
      3_000,
      'public h2c',
      raw(s.gateway.url, h2c('/v1/models', `Authorization: Bearer ${KEY}\r\n`)),
    );
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({ object: 'list', data: [{ id: 'gpt-4o-mini' }] });
  });
});
