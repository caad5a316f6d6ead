import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { ClientStreamEncoder } from '../formats/encoder.ts';
import type { ChatChunk } from '../formats/openai/types.ts';
import type { StreamEnd } from '../pipeline/stream-relay.ts';
import { openStream, writeStream } from './stream-writer.ts';

let server: Server | undefined;
afterEach(() => new Promise<void>((done) => (server ? server.close(() => done()) : done())));

/** A real server answering every request with `openStream(headers)` and an empty body. */
async function serve(headers: Record<string, string>): Promise<number> {
  server = createServer((_req, res) => {
    openStream(res, headers);
    res.end();
  });
  await new Promise<void>((ready) => server!.listen(0, '127.0.0.1', ready));
  return (server.address() as AddressInfo).port;
}

/** The raw head of the answer to one request line over a plain socket. */
function rawHead(port: number, version: '1.0' | '1.1'): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () =>
      socket.write(
        `GET / HTTP/${version}\r\nhost: x\r\n${version === '1.1' ? 'connection: close\r\n' : ''}\r\n`,
      ),
    );
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(text.split('\r\n\r\n')[0]!.split('\r\n').slice(1)));
  });
}

const names = (head: string[]): string[] => head.map((l) => l.slice(0, l.indexOf(':')).toLowerCase());
const value = (head: string[], name: string): string | undefined =>
  head
    .find((l) => l.toLowerCase().startsWith(`${name}:`))
    ?.slice(name.length + 1)
    .trim();

describe("a stream's status and headers", () => {
  it('sends the event-stream headers, the trailer names and the request headers, each once', async () => {
    const port = await serve({ 'x-gantry-request-id': 'r-1', 'x-gantry-provider': 'dep-a' });
    const head = await rawHead(port, '1.1');
    expect(value(head, 'content-type')).toBe('text/event-stream; charset=utf-8');
    expect(value(head, 'cache-control')).toBe('no-cache');
    expect(value(head, 'x-accel-buffering')).toBe('no');
    expect(value(head, 'trailer')?.split(', ')).toContain('x-gantry-cost');
    expect(value(head, 'x-gantry-request-id')).toBe('r-1');
    expect(value(head, 'x-gantry-provider')).toBe('dep-a');
    const all = names(head);
    expect(all.length).toBe(new Set(all).size);
  });

  it('lets a request header replace a stream header of the same name, sent once', async () => {
    const port = await serve({ 'cache-control': 'no-store', 'x-gantry-request-id': 'r-2' });
    const head = await rawHead(port, '1.1');
    expect(names(head).filter((n) => n === 'cache-control')).toEqual(['cache-control']);
    expect(value(head, 'cache-control')).toBe('no-store');
  });

  it('closes an HTTP/1.0 answer whatever the request headers say, with no trailer', async () => {
    const port = await serve({ connection: 'keep-alive', 'x-gantry-request-id': 'r-3' });
    const head = await rawHead(port, '1.0');
    expect(names(head).filter((n) => n === 'connection')).toEqual(['connection']);
    expect(value(head, 'connection')).toBe('close');
    expect(value(head, 'trailer')).toBeUndefined();
    expect(value(head, 'x-gantry-request-id')).toBe('r-3');
  });
});

describe('a stream whose encoder throws', () => {
  it('ends with an error event and lets the upstream go (the relay’s generator is closed)', async () => {
    let released = false;
    let finished: Promise<unknown> | undefined;
    async function* relay(): AsyncGenerator<ChatChunk[], StreamEnd> {
      try {
        for (;;) yield [{ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [] }];
      } finally {
        // Where the relay cancels its upstream read.
        released = true;
      }
    }
    const encoder: ClientStreamEncoder = {
      chunk: () => {
        throw new Error('encoder bug');
      },
      finish: () => '',
      fail: (e) => `data: ${JSON.stringify(e.toBody())}\n\n`,
    };
    server = createServer((_req, res) => {
      finished = writeStream(res, {}, encoder, relay(), () =>
        Promise.reject(new Error('never settled here')),
      );
    });
    await new Promise<void>((ready) => server!.listen(0, '127.0.0.1', ready));
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    expect(await res.text()).toContain('internal_error');
    await finished;
    expect(released).toBe(true);
  });
});
