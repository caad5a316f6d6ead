/**
 * A streamed answer queued behind a slow one on a pipelined connection keeps writing into its
 * response, which Node buffers until the socket is its turn. Past the response's high-water
 * mark the stream waits for 'drain'. When the client leaves, that response must still end as
 * one whose socket closed: recorded 499 once, charged for what was produced, the in-flight
 * gauge back down. The upstream here is a plain OpenAI-wire server, because the project's fake
 * answers too briefly to fill the buffer: one slow JSON answer, and one endless stream of big
 * chunks. Raw sockets.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UsageRecord } from '../../dataplane/src/accounting/usage.ts';
import { until } from '../harness/gateway-spawn.ts';
import { rawChat, RawConnection } from '../harness/raw-http.ts';
import { apiKey, deployment, startStack, tenant, type Stack } from '../harness/stack.ts';
import { usageToday } from '../harness/usage-record.ts';

const KEY = 'sk-pipelined-buffered';
const CHUNKS = 400; // 400 chunks of ~330 bytes: far past a response's 16 KB high-water mark
const started: string[] = [];
let upstream: Server;
let stack: Stack;

function openAiUpstream(): Server {
  return createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => (body += d));
    req.on('end', () => {
      const { model } = JSON.parse(body) as { model: string };
      started.push(model);
      if (model === 'slow') return; // answers never: the client leaves first
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const delta = { content: 'x'.repeat(200) };
      const chunk = {
        id: 'c1',
        object: 'chat.completion.chunk',
        created: 1,
        model,
        choices: [{ index: 0, delta }],
      };
      for (let i = 0; i < CHUNKS; i++) res.write(`data: ${JSON.stringify(chunk)}\n\n`);
    });
  });
}

beforeAll(async () => {
  upstream = openAiUpstream();
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
  stack = await startStack(() =>
    [
      deployment({ name: 'slow', model: 'slow', baseUrl: base }),
      deployment({ name: 'big', model: 'big', baseUrl: base }),
      tenant('buffered'),
      apiKey('k', KEY, 'buffered'),
    ].join(''),
  );
});
afterAll(async () => {
  await stack?.close();
  upstream?.closeAllConnections();
  upstream?.close();
});

const chat = (model: string, stream: boolean): string =>
  rawChat(KEY, { model, stream, messages: [{ role: 'user', content: 'hi' }] });

const records = (): Promise<UsageRecord[]> => usageToday(stack, 'buffered', 50);

const inflight = async (): Promise<number> => {
  const text = await (await fetch(`${stack.gateway.adminUrl}/metrics`)).text();
  return Number(/^gantry_inflight_requests (\S+)$/m.exec(text)?.[1] ?? NaN);
};

describe('a queued stream that filled its buffer when the client leaves', () => {
  it('ends like a stream whose socket closed: both requests 499, once each, gauge back to 0', async () => {
    const c = new RawConnection(stack.gateway.url).send(chat('slow', false) + chat('big', true));
    await until(() => started.length >= 2);
    c.close();
    await until(async () => (await records()).length >= 2);
    const left = await records();
    expect(left.map((r) => [r.requestedModel, r.status]).sort()).toEqual([
      ['big', 499],
      ['slow', 499],
    ]);
    const big = left.find((r) => r.requestedModel === 'big')!;
    expect(big.completionTokens).toBeGreaterThan(0);
    await until(async () => (await inflight()) === 0);
  });
});
