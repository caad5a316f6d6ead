/**
 * A legacy /v1/completions stream is piped as the upstream sent it, but only whole events: a
 * stream that breaks mid-event then ends with the gateway's error event alone, which the SDKs
 * read as the error (a partial event before it made them throw a SyntaxError). Holding back
 * must not delay a normal stream: each event goes out with the read that completes it. The
 * upstream here is scripted step by step, so the test waits on what the client has read, never
 * on time.
 */
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { apiKey, deployment, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEY = 'sk-test-legacy-relay';
let stack: Stack;
let upstream: Server;
/** What the scripted upstream does with the next stream it is asked for. */
let script: (res: ServerResponse) => Promise<void> = () => Promise.resolve();

beforeAll(async () => {
  upstream = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.flushHeaders();
      void script(res);
    });
  });
  await new Promise<void>((done) => upstream.listen(0, '127.0.0.1', done));
  const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
  stack = await startStack(() =>
    [
      deployment({ name: 'scripted', model: 'm', baseUrl: base, capabilities: ['completions', 'streaming'] }),
      tenant('acme'),
      apiKey('k', KEY, 'acme'),
    ].join(''),
  );
});
afterAll(async () => {
  await stack.close();
  await new Promise((done) => upstream.close(done));
});

const ev = (text: string): string =>
  `data: ${JSON.stringify({ id: 'c', object: 'text_completion', model: 'm', choices: [{ index: 0, text }] })}\n\n`;

/** A streamed legacy completion read as it arrives; `until` resolves once the body holds a string. */
function open(): {
  until(s: string): Promise<string>;
  done: Promise<{ body: string; trailers: NodeJS.Dict<string> }>;
} {
  let body = '';
  const waiters: { s: string; done: (b: string) => void }[] = [];
  const done = new Promise<{ body: string; trailers: NodeJS.Dict<string> }>((resolve, reject) => {
    const url = new URL(`${stack.baseURL}/completions`);
    const req = request(
      url,
      { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' } },
      (res: IncomingMessage) => {
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
          for (const w of waiters.splice(0))
            if (body.includes(w.s)) w.done(body);
            else waiters.push(w);
        });
        res.on('end', () => resolve({ body, trailers: res.trailers }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify({ model: 'm', prompt: 'hi', stream: true }));
  });
  return {
    until: (s) =>
      body.includes(s) ? Promise.resolve(body) : new Promise((resolve) => waiters.push({ s, done: resolve })),
    done,
  };
}

/** Resolves when the test says go: the upstream's next step waits on the client's reading. */
function gate(): { wait: Promise<void>; go: () => void } {
  let go = () => undefined as void;
  const wait = new Promise<void>((resolve) => (go = resolve));
  return { wait, go };
}

it('each upstream event reaches the client with the read that completes it, never half of one', async () => {
  const [second, third] = [gate(), gate()];
  const [a, b, c] = [ev('one'), ev('two'), ev('three')];
  script = async (res) => {
    // Reads that end inside an event: the whole ones before it must not wait for the rest.
    res.write(a + b.slice(0, 20));
    await second.wait;
    res.write(b.slice(20) + c.slice(0, 5));
    await third.wait;
    res.end(c.slice(5) + 'data: [DONE]\n\n');
  };
  const stream = open();
  const afterA = await stream.until(a);
  // Only whole events, each as soon as it was complete: the client reads `a` while the
  // upstream holds back the rest of `b` until the client has read `a`.
  expect(afterA).toBe(a);
  second.go();
  expect(await stream.until(b)).toBe(a + b);
  third.go();
  const { body, trailers } = await stream.done;
  expect(body).toBe(a + b + c + 'data: [DONE]\n\n');
  expect(Number(trailers['x-gantry-cost'])).toBeGreaterThan(0);
});

it('a stream that broke mid-event ends with the error event right after the last whole event', async () => {
  script = async (res) => {
    res.write(ev('one') + 'data: {"id":"c","choices":[{"te');
    await new Promise((done) => res.write('', done));
    res.socket?.destroy();
  };
  const { body, trailers } = await open().done;
  expect(body.startsWith(ev('one') + 'data: {"error":')).toBe(true);
  const last = body.slice(ev('one').length + 'data: '.length).trim();
  expect((JSON.parse(last) as { error: { message: string } }).error.message).toBe('stream interrupted');
  expect(Number(trailers['x-gantry-cost'])).toBe(0);
});

it('a stream that sent [DONE] and then broke is complete: billed, no error event', async () => {
  script = async (res) => {
    res.write(ev('one') + 'data: [DONE]\n\n');
    await new Promise((done) => res.write('', done));
    res.socket?.destroy();
  };
  const { body, trailers } = await open().done;
  expect(body).toBe(ev('one') + 'data: [DONE]\n\n');
  expect(Number(trailers['x-gantry-cost'])).toBeGreaterThan(0);
});
