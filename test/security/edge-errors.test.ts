/**
 * Issue 9.12 over real HTTP: every error the edge produces, including the ones raised before
 * routing (Node's parser, Fastify's URL decoding and body parsing), has the SPEC.md body;
 * administrative paths are refused however they are spelled.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEY = 'sk-edge-errors';
let stack: Stack;

beforeAll(async () => {
  stack = await startStack(
    ([url]) =>
      [
        deployment({ name: 'm', model: 'm', baseUrl: fakeBase(url!) }),
        tenant('acme'),
        apiKey('k', KEY, 'acme'),
      ].join(''),
    { bodyLimitBytes: 4096 },
  );
});
afterAll(() => stack?.close());

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: { type?: string; error: { message: string; type: string; code: number } };
}

/** Raw bytes, so paths reach the server exactly as written (fetch would normalise them). */
function raw(head: string, body = ''): Promise<Answer> {
  const { hostname, port } = new URL(stack.gateway.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (text += d));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      const [headText = '', bodyText = ''] = text.split('\r\n\r\n', 2);
      const m = /^HTTP\/1\.1 (\d{3})/.exec(headText);
      if (!m) return reject(new Error(`no answer: ${text.slice(0, 200)}`));
      const headers: Record<string, string> = {};
      for (const line of headText.split('\r\n').slice(1)) {
        const i = line.indexOf(':');
        headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
      }
      resolve({ status: Number(m[1]), headers, body: JSON.parse(bodyText) as Answer['body'] });
    });
    socket.write(
      `${head}\r\nHost: x\r\nConnection: close\r\n${body ? `Content-Length: ${Buffer.byteLength(body)}\r\n` : ''}\r\n${body}`,
    );
  });
}

function expectSpec(a: Answer, status: number, type: string): void {
  expect(a.status).toBe(status);
  expect(a.body.error).toMatchObject({ type, code: status });
  expect(a.body.error.message.length).toBeGreaterThan(0);
}

describe('administrative paths are refused however they are spelled', () => {
  it.each([
    '/ui',
    '/UI',
    '//ui',
    '/ui/',
    '/%75i',
    '/%2575i',
    '/%2Fui',
    '/v1/../ui',
    '/./UI/settings',
    '/ui;jsessionid=1',
    '/Login',
    '/SSO/',
    'http://gateway.example/ui',
  ])('GET %s → 403 permission_denied', async (path) => {
    expectSpec(await raw(`GET ${path} HTTP/1.1`), 403, 'permission_denied');
  });

  it('a look-alike that is not one is an ordinary 404', async () => {
    expectSpec(await raw('GET /uix HTTP/1.1'), 404, 'not_found');
  });
});

describe('errors raised before routing have the SPEC.md body', () => {
  it('oversized headers → 431', async () => {
    expectSpec(
      await raw(`GET /v1/models HTTP/1.1\r\nX-Big: ${'b'.repeat(20_000)}`),
      431,
      'headers_too_large',
    );
  });

  it.each([
    ['a header without a colon', 'GET /v1/models HTTP/1.1\r\nBroken header'],
    ['a space in the method', 'GE T /v1/models HTTP/1.1'],
    ['an unknown HTTP version', 'GET /v1/models HTTP/7.1'],
  ])('%s → 400', async (_, head) => {
    expectSpec(await raw(head), 400, 'invalid_request_error');
  });

  it('a path with bad percent-encoding → 400 saying so', async () => {
    const a = await raw('GET /v1/%zz HTTP/1.1');
    expectSpec(a, 400, 'invalid_request_error');
    expect(a.body.error.message).toMatch(/percent-encoding/);
    expect(a.headers['x-gantry-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('CONNECT → 405 (Node would otherwise drop the connection without a word)', async () => {
    const a = await raw('CONNECT example.com:443 HTTP/1.1');
    expectSpec(a, 405, 'method_not_allowed');
    expect(a.headers.allow).toContain('POST');
  });

  it('a wrong method on a route → 405 with Allow', async () => {
    const a = await raw(`GET /v1/chat/completions HTTP/1.1\r\nAuthorization: Bearer ${KEY}`);
    expectSpec(a, 405, 'method_not_allowed');
    expect(a.headers.allow).toContain('POST');
  });

  it('a body that is not JSON by content-type → 415, not a schema error', async () => {
    const a = await raw(
      `POST /v1/chat/completions HTTP/1.1\r\nAuthorization: Bearer ${KEY}\r\nContent-Type: text/plain`,
      'hello',
    );
    expectSpec(a, 415, 'unsupported_media_type');
  });

  it('a body over the limit → 413', async () => {
    const a = await raw(
      `POST /v1/chat/completions HTTP/1.1\r\nAuthorization: Bearer ${KEY}\r\nContent-Type: application/json`,
      JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x'.repeat(5000) }] }),
    );
    expectSpec(a, 413, 'request_too_large');
  });
});

describe('/v1/messages answers in Anthropic’s shape as well', () => {
  it.each([
    ['broken JSON', 'application/json', '{"model":', 400],
    ['a text/plain body', 'text/plain', 'hi', 415],
  ])('%s → %i with type: "error"', async (_, contentType, body, status) => {
    const a = await raw(
      `POST /v1/messages HTTP/1.1\r\nx-api-key: ${KEY}\r\nContent-Type: ${contentType}`,
      body,
    );
    expect(a.status).toBe(status);
    expect(a.body.type).toBe('error');
    expect(a.body.error.code).toBe(status);
  });

  it('an unknown path below it too; a look-alike path gets the plain SPEC body', async () => {
    expect((await raw('POST /v1/messages/count_tokens HTTP/1.1')).body.type).toBe('error');
    const lookAlike = await raw('POST /v1/messagesX HTTP/1.1');
    expectSpec(lookAlike, 404, 'not_found');
    expect(lookAlike.body.type).toBeUndefined();
  });
});

describe('the admin port', () => {
  it('answers an unknown path with the SPEC.md body too', async () => {
    const res = await fetch(`${stack.gateway.adminUrl}/nope`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({
      error: { message: 'no route GET /nope', type: 'not_found', code: 404 },
    });
  });
});
