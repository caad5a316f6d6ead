/**
 * One connection pipelining many requests. Node hands every request of a read to the handler
 * at once, so without a bound one client write of 200 tiny chats started 200 upstream calls,
 * past the connection cap. The guard dispatches at most `maxPipelinedRequests` per connection;
 * the rest wait, and every answer still comes back, in order. Raw sockets; upstream concurrency
 * is counted exactly by a pass-through in front of the fake provider (which delays each answer).
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeAnswer } from '../../dataplane/src/fake-provider/behaviour.ts';
import { DEFAULT_LIMITS } from '../../dataplane/src/server/limits.ts';
import { parseAnswers, RawConnection, statusLines } from '../harness/raw-http.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEY = 'sk-pipeline-cap';
const K = DEFAULT_LIMITS.maxPipelinedRequests;

/** Upstream requests in progress now, and the most seen at once. */
const upstream = { now: 0, peak: 0, target: '' };
let counter: Server;
let stack: Stack;

beforeAll(async () => {
  counter = createServer((req, res) => {
    upstream.now++;
    upstream.peak = Math.max(upstream.peak, upstream.now);
    res.once('close', () => upstream.now--);
    const up = request(
      `${upstream.target}${req.url ?? '/'}`,
      { method: req.method, headers: req.headers },
      (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      },
    );
    req.pipe(up);
  });
  await new Promise<void>((resolve) => counter.listen(0, '127.0.0.1', resolve));
  const via = `http://127.0.0.1:${(counter.address() as AddressInfo).port}`;
  stack = await startStack(([url]) => {
    upstream.target = url!;
    return [
      deployment({ name: 'm', model: 'm', baseUrl: fakeBase(via) }),
      tenant('pipecap'),
      apiKey('k', KEY, 'pipecap'),
    ].join('');
  });
});
afterAll(async () => {
  await stack?.close();
  counter?.close();
});

const chat = (text: string): string => {
  const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: text }] });
  return (
    `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
};

const contentOf = (body: string): unknown =>
  (JSON.parse(body) as { choices: Array<{ message: { content: unknown } }> }).choices[0]?.message.content;

describe('one connection pipelining many requests', () => {
  it(`never has more than ${K} upstream at once, and every answer comes back in order`, async () => {
    stack.fakes[0]!.setFaults([{ match: { model: 'm' }, fault: { type: 'delay', ms: 50 } }]);
    upstream.peak = 0;
    const n = 200;
    const texts = Array.from({ length: n }, (_, i) => `request ${i}`);
    // One write: Node parses all 200 from the same read.
    const c = new RawConnection(stack.gateway.url).send(texts.map(chat).join(''));
    await c.receive((t) => statusLines(t) >= n, 30_000);
    const answers = parseAnswers(c.text);
    expect(answers.map((a) => a.status)).toEqual(texts.map(() => 200));
    expect(answers.map((a) => contentOf(a.body))).toEqual(texts.map(fakeAnswer));
    expect(upstream.peak).toBe(K);
    c.close();
  });

  it('leaves a connection sending one request at a time as it was', async () => {
    stack.fakes[0]!.setFaults([]);
    const c = new RawConnection(stack.gateway.url);
    for (let i = 0; i < 3; i++) {
      c.send(chat(`one ${i}`));
      await c.receive((t) => statusLines(t) >= i + 1);
    }
    expect(parseAnswers(c.text).map((a) => contentOf(a.body))).toEqual(
      [0, 1, 2].map((i) => fakeAnswer(`one ${i}`)),
    );
    c.close();
  });
});
