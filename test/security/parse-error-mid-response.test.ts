/**
 * A request the parser rejects (or a CONNECT) on a connection that already has a response
 * under way is not answered with a second head written into that response (or ahead of it,
 * where the client would take it for the earlier request's answer): the connection is closed
 * instead. With no response under way the raw SPEC.md answer still goes out. Raw sockets.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAnswers, rawChat, RawConnection, statusLines } from '../harness/raw-http.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEY = 'sk-parse-error-mid-response';
/** Node's parser rejects an unknown HTTP version. */
const MALFORMED = 'GET /v1/models HTTP/7.1\r\nHost: x\r\n\r\n';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack(([url]) =>
    [
      deployment({ name: 'm', model: 'm', baseUrl: fakeBase(url!), capabilities: ['chat', 'streaming'] }),
      tenant('acme'),
      apiKey('k', KEY, 'acme'),
    ].join(''),
  );
});
afterAll(() => stack?.close());

const chatRequest = (stream: boolean): string =>
  rawChat(KEY, { model: 'm', stream, messages: [{ role: 'user', content: 'hi' }] });

describe('a parse error on a connection with a response under way', () => {
  it('mid-stream: the stream is cut, no second status line is written into it', async () => {
    stack.fakes[0]!.setFaults([{ match: { stream: true }, fault: { type: 'stall-stream', afterChunks: 1 } }]);
    const c = new RawConnection(stack.gateway.url).send(chatRequest(true));
    await c.receive((t) => t.includes('data: '));
    c.send(MALFORMED);
    await c.closed;
    expect(c.text).toMatch(/^HTTP\/1\.1 200 /);
    expect(statusLines(c.text)).toBe(1);
  });

  it('pipelined behind a request still being served: no answer ahead of that request’s own', async () => {
    // Both requests arrive in one segment: the parser fails on the second while the first is served.
    stack.fakes[0]!.setFaults([{ fault: { type: 'hang' } }]);
    const c = new RawConnection(stack.gateway.url).send(chatRequest(false) + MALFORMED);
    await c.closed;
    expect(statusLines(c.text)).toBe(0);
  });

  it('a CONNECT pipelined behind a request still being served: no 405 ahead of that request’s answer', async () => {
    stack.fakes[0]!.setFaults([{ fault: { type: 'hang' } }]);
    const c = new RawConnection(stack.gateway.url).send(
      chatRequest(false) + 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com\r\n\r\n',
    );
    await c.closed;
    expect(statusLines(c.text)).toBe(0);
  });

  it('with nothing under way the malformed request still gets its SPEC.md 400', async () => {
    const [a, ...more] = await RawConnection.exchange(stack.gateway.url, MALFORMED);
    expect(more).toEqual([]);
    expect(a!.status).toBe(400);
    expect(JSON.parse(a!.body)).toMatchObject({ error: { type: 'invalid_request_error', code: 400 } });
  });

  it('after a finished answer on a kept-alive connection, the next malformed request is answered', async () => {
    stack.fakes[0]!.setFaults([]);
    const c = new RawConnection(stack.gateway.url).send(chatRequest(false));
    await c.receive((t) => parseAnswers(t).length === 1);
    c.send(MALFORMED);
    await c.closed;
    expect(parseAnswers(c.text).map((a) => a.status)).toEqual([200, 400]);
  });
});
