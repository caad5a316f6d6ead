/**
 * The admin port (/healthz, /readyz, /metrics) answers like the public one at its edge:
 * errors raised before routing carry a request id that is in the gateway's log, and a
 * request arriving while the port closes gets the gateway's own 503 in SPEC.md's shape.
 * Raw sockets, so malformed and pipelined requests reach the server as written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../harness/gateway-spawn.ts';
import { logSink, type LogLine } from '../harness/log-sink.ts';
import { parseAnswers, RawConnection, type RawAnswer } from '../harness/raw-http.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const config = ([url]: string[]) =>
  [
    deployment({ name: 'm', model: 'm', baseUrl: fakeBase(url!) }),
    tenant('acme'),
    apiKey('k', 'sk-admin-edge', 'acme'),
  ].join('');

interface ErrorBody {
  error: { message: string; type: string; code: number };
}

/** The SPEC.md error body and both id headers; returns the id. */
function expectSpecAnswer(a: RawAnswer | undefined, status: number, type: string): string {
  expect(a?.status).toBe(status);
  const body = JSON.parse(a!.body) as ErrorBody;
  expect(body.error).toMatchObject({ type, code: status });
  expect(body.error.message.length).toBeGreaterThan(0);
  const id = a!.headers['x-gantry-request-id'];
  expect(id).toBeTruthy();
  expect(a!.headers['x-request-id']).toBe(id);
  return id!;
}

describe('the admin port, before routing', () => {
  let stack: Stack;
  const logs: LogLine[] = [];
  beforeAll(async () => {
    stack = await startStack(config, { logger: { level: 'debug', stream: logSink(logs) } });
  });
  afterAll(() => stack?.close());

  it.each([
    [
      'a header without a colon',
      'GET /healthz HTTP/1.1\r\nHost: x\r\nBroken header\r\n\r\n',
      400,
      'invalid_request_error',
    ],
    [
      'oversized headers',
      `GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`,
      431,
      'headers_too_large',
    ],
    ['CONNECT', 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com\r\n\r\n', 405, 'method_not_allowed'],
  ])('%s: SPEC.md body, a fresh id, and the id in the gateway log', async (_, bytes, status, type) => {
    const [a, ...more] = await RawConnection.exchange(stack.gateway.adminUrl, bytes);
    expect(more).toEqual([]);
    const id = expectSpecAnswer(a, status, type);
    expect(id).toMatch(UUID);
    await until(() => logs.some((l) => l.requestId === id), 2_000);
    expect(logs.filter((l) => l.requestId === id)).toEqual([
      expect.objectContaining({ msg: 'answered before routing', status }),
    ]);
  });

  it('a path with bad percent-encoding: 400 in SPEC.md shape with both ids, not Fastify’s own body', async () => {
    const [a] = await RawConnection.exchange(
      stack.gateway.adminUrl,
      'GET /%zz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    );
    expectSpecAnswer(a, 400, 'invalid_request_error');
  });

  it('ordinary answers carry the caller’s request id as well', async () => {
    const res = await fetch(`${stack.gateway.adminUrl}/healthz`, { headers: { 'x-request-id': 'probe-1' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-gantry-request-id')).toBe('probe-1');
    expect(res.headers.get('x-request-id')).toBe('probe-1');
    // Probes are not logged one line each.
    expect(logs.filter((l) => l.reqId === 'probe-1')).toEqual([]);
  });
});

/**
 * Holds a request on the admin port (its body is still arriving), closes the gateway, then
 * finishes that body with `late` pipelined behind it: `late` reaches a port already closing.
 */
async function lateRequest(late: string): Promise<RawAnswer[]> {
  const stack = await startStack(config);
  const admin = stack.gateway.admin.server;
  const partial = '{"probe":';
  const routed = new Promise((resolve) => admin.once('request', resolve));
  const c = new RawConnection(stack.gateway.adminUrl).send(
    'POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
      `Content-Length: ${partial.length + 5}\r\n\r\n${partial}`,
  );
  await routed;
  const closed = stack.close();
  await until(() => !admin.listening);
  c.send(`true}${late}`);
  await c.closed;
  await closed;
  const [first, ...rest] = parseAnswers(c.text);
  expect(first!.status).toBe(404);
  return rest;
}

describe('the admin port while it closes', () => {
  it('answers a request that arrives on an open connection with the gateway’s 503, then closes', async () => {
    const [late, ...more] = await lateRequest(
      'GET /metrics HTTP/1.1\r\nHost: x\r\nX-Request-Id: late-1\r\n\r\n',
    );
    expect(more).toEqual([]);
    expect(expectSpecAnswer(late, 503, 'service_unavailable')).toBe('late-1');
    expect((JSON.parse(late!.body) as ErrorBody).error.message).toMatch(/no new requests/);
    expect(late!.headers.connection).toBe('close');
  });

  it('a path it cannot decode gets its 400 with `connection: close` as well', async () => {
    const [late, ...more] = await lateRequest('GET /%zz HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(more).toEqual([]);
    expectSpecAnswer(late, 400, 'invalid_request_error');
    expect(late!.headers.connection).toBe('close');
  });
});
