/**
 * Answers written before Fastify routes a request (Node's parser errors, CONNECT) and the
 * 503s of a closing gateway carry a request id in both id headers, like every other answer,
 * and the id is in the gateway's log. Real sockets: raw bytes, so malformed requests reach
 * the server as written.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../harness/gateway-spawn.ts';
import { logSink, type LogLine } from '../harness/log-sink.ts';
import { parseAnswers as parseRawAnswers, type RawAnswer } from '../harness/raw-http.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEY = 'sk-pre-routing-ids';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

type ErrorBody = { error: { message: string; type: string; code: number } };
type Answer = Omit<RawAnswer, 'body'> & { body: ErrorBody };

/** Every HTTP/1.1 answer in what arrived before the server closed the socket, bodies parsed. */
const parseAnswers = (text: string): Answer[] =>
  parseRawAnswers(text).map((a) => ({ ...a, body: JSON.parse(a.body) as ErrorBody }));

/** Sends raw bytes and resolves with the answers once the server has closed the connection. */
function exchange(url: string, bytes: string, onOpen?: () => void): Promise<Answer[]> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname, onOpen);
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => (text += d));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(parseAnswers(text)));
    socket.write(bytes);
  });
}

function expectIds(a: Answer): string {
  const id = a.headers['x-gantry-request-id'];
  expect(id).toMatch(UUID);
  expect(a.headers['x-request-id']).toBe(id);
  return id!;
}

const config = ([url]: string[]) =>
  [
    deployment({ name: 'm', model: 'm', baseUrl: fakeBase(url!) }),
    tenant('acme'),
    apiKey('k', KEY, 'acme'),
  ].join('');

describe('answers written before routing', () => {
  let stack: Stack;
  const logs: LogLine[] = [];
  beforeAll(async () => {
    stack = await startStack(config, {
      logger: { level: 'debug', stream: logSink(logs) },
      // Short enough that the 408 case below is answered quickly.
      limits: {
        receiveTimeoutMs: 1_000,
        headersTimeoutMs: 1_000,
        keepAliveTimeoutMs: 5_000,
        maxConnections: 100,
      },
    });
  });
  afterAll(() => stack?.close());

  const logged = (id: string): LogLine[] => logs.filter((l) => l.requestId === id);

  it.each([
    ['oversized headers', `GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`, 431],
    ['a header without a colon', 'GET /v1/models HTTP/1.1\r\nHost: x\r\nBroken header\r\n\r\n', 400],
    ['an unknown HTTP version', 'GET /v1/models HTTP/7.1\r\nHost: x\r\n\r\n', 400],
    ['CONNECT', 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com\r\n\r\n', 405],
    ['headers that never finish', 'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n', 408],
  ])('%s: a fresh id in both headers and in the log', async (_, bytes, status) => {
    const [a, ...more] = await exchange(stack.gateway.url, bytes);
    expect(more).toEqual([]);
    expect(a!.status).toBe(status);
    expect(a!.body.error.code).toBe(status);
    const id = expectIds(a!);
    await until(() => logged(id).length > 0, 2_000);
    expect(logged(id)).toEqual([
      expect.objectContaining({ msg: 'answered before routing', status, level: expect.any(Number) }),
    ]);
  });

  it('ignores the x-request-id of a request it could not parse, and never repeats an id', async () => {
    const bad = 'GET /v1/models HTTP/1.1\r\nX-Request-Id: mine\r\nBroken header\r\n\r\n';
    const answers = (
      await Promise.all(Array.from({ length: 5 }, () => exchange(stack.gateway.url, bad)))
    ).flat();
    const ids = answers.map(expectIds);
    expect(new Set(ids).size).toBe(5);
    expect(ids).not.toContain('mine');
  });

  it('warns at most once per interval: a burst of malformed requests is logged at debug', async () => {
    const bad = 'GET / HTTP/1.1\r\nBroken header\r\n\r\n';
    const answers = (
      await Promise.all(Array.from({ length: 30 }, () => exchange(stack.gateway.url, bad)))
    ).flat();
    const ids = answers.map(expectIds);
    await until(() => ids.every((id) => logged(id).length === 1), 2_000);
    const levels = ids.map((id) => logged(id)[0]!.level);
    // pino: 20 debug, 40 warn. Earlier cases in this file may have taken this interval's warn.
    expect(levels.filter((l) => l === 40).length).toBeLessThanOrEqual(1);
    expect(levels.filter((l) => l === 20).length).toBeGreaterThanOrEqual(29);
    const warns = logs.filter((l) => l.msg === 'answered before routing' && l.level === 40);
    expect(warns.length).toBeGreaterThanOrEqual(1);
    expect(warns[0]!.quietSinceLast).toBe(0);
  });

  it('a path Fastify cannot decode gets both id headers too', async () => {
    const [a] = await exchange(
      stack.gateway.url,
      'GET /v1/%zz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    );
    expect(a!.status).toBe(400);
    expectIds(a!);
  });
});

describe('a closing gateway', () => {
  let stack: Stack | undefined;
  afterAll(() => stack?.close());

  it('answers both its 503s in the SPEC.md shape with both id headers', async () => {
    stack = await startStack(config, { drainTimeoutMs: 1_500 });
    const gateway = stack.gateway;
    const fake = stack.fakes[0]!;
    // The first request waits on the upstream until the drain deadline cuts it (503 while
    // shutting down). The second arrives on the same connection once the server is closing,
    // and is shed (503, no new requests).
    fake.setFaults([{ fault: { type: 'hang' } }]);
    const chat = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'wait' }] });
    const first =
      `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(chat)}\r\n\r\n${chat}`;
    const { hostname, port } = new URL(gateway.url);
    const socket = connect(Number(port), hostname);
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => (text += d));
    const ended = new Promise((resolve) => socket.on('close', resolve));
    socket.write(first);
    await until(() => fake.requests.length === 1);
    const closed = gateway.close();
    // Fastify stops listening right after its preClose hooks: the gateway is closing now.
    await until(() => !gateway.app.server.listening);
    socket.write(
      `GET /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\nX-Request-Id: second-1\r\n\r\n`,
    );
    await ended;
    await closed;
    stack = undefined;
    const [cut, shed, ...more] = parseAnswers(text);
    expect(more).toEqual([]);
    expect(cut!.status).toBe(503);
    expect(cut!.body.error).toMatchObject({ type: 'service_unavailable', code: 503 });
    expect(cut!.body.error.message).toMatch(/shutting down/);
    expectIds(cut!);
    expect(shed!.status).toBe(503);
    expect(shed!.body.error).toMatchObject({ type: 'service_unavailable', code: 503 });
    expect(shed!.body.error.message).toMatch(/no new requests/);
    expect(shed!.headers['x-gantry-request-id']).toBe('second-1');
    expect(shed!.headers['x-request-id']).toBe('second-1');
    expect(shed!.headers.connection).toBe('close');
  });
});
