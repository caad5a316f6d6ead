/**
 * HTTP/1.0 clients (nginx's default towards upstreams) asking for a stream: no chunked
 * encoding and no trailers exist there, so the stream is close-delimited; it still ends
 * properly, and the request is settled and recorded like any other.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { costUsd } from '../../dataplane/src/accounting/cost.ts';
import type { UsageRecord } from '../../dataplane/src/accounting/usage.ts';
import { fakeAnswer } from '../../dataplane/src/fake-provider/index.ts';
import { rawConnect, until } from '../harness/gateway-spawn.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEY = 'sk-test-http10';
const PRICING = { inputPerMillionTokens: 1, outputPerMillionTokens: 2 };

let stack: Stack;
beforeAll(async () => {
  stack = await startStack(([f]) =>
    [
      deployment({
        name: 'gpt',
        model: 'gpt-4o-mini',
        baseUrl: fakeBase(f!),
        capabilities: ['chat', 'streaming', 'completions'],
        pricing: PRICING,
      }),
      tenant('acme'),
      apiKey('k', KEY, 'acme'),
    ].join(''),
  );
});
afterAll(() => stack.close());

interface RawResponse {
  statusLine: string;
  headers: Record<string, string>;
  body: string;
}

/** Sends one HTTP/1.0 POST and reads until the server closes the connection. */
async function http10(path: string, body: unknown): Promise<RawResponse> {
  const json = JSON.stringify(body);
  const port = Number(new URL(stack.gateway.url).port);
  const c = await rawConnect(
    port,
    `POST ${path} HTTP/1.0\r\nHost: gantry\r\nAuthorization: Bearer ${KEY}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`,
  );
  await c.closed;
  const raw = c.data();
  const split = raw.indexOf('\r\n\r\n');
  const [statusLine = '', ...lines] = raw.slice(0, split).split('\r\n');
  const headers = Object.fromEntries(
    lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
  );
  return { statusLine, headers, body: raw.slice(split + 4) };
}

async function recorded(id: string): Promise<UsageRecord> {
  const today = new Date().toISOString().slice(0, 10);
  let found: UsageRecord | undefined;
  await until(async () => {
    const logs = await stack.gateway.stores.usage.logs({ tenant: 'acme', from: today, to: today, limit: 50 });
    found = logs.find((r) => r.id === id);
    return found !== undefined;
  });
  return found!;
}

function expectCloseDelimited(res: RawResponse): void {
  expect(res.statusLine).toMatch(/^HTTP\/1\.[01] 200 /);
  expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
  expect(res.headers['transfer-encoding']).toBeUndefined();
  expect(res.headers['content-length']).toBeUndefined();
  expect(res.headers.trailer).toBeUndefined();
  expect(res.headers.connection).toBe('close');
}

describe('HTTP/1.0 stream requests', () => {
  it('chat: a close-delimited SSE stream that ends with [DONE], settled and recorded', async () => {
    const prompt = 'streaming to an old client';
    const res = await http10('/v1/chat/completions', {
      model: 'gpt-4o-mini',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: prompt }],
    });
    expectCloseDelimited(res);
    const events = res.body
      .split('\n\n')
      .filter((e) => e.startsWith('data: '))
      .map((e) => e.slice(6));
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1).map(
      (e) =>
        JSON.parse(e) as {
          choices: { delta: { content?: string } }[];
          usage?: { prompt_tokens: number; completion_tokens: number } | null;
        },
    );
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe(fakeAnswer(prompt));
    const usage = chunks.at(-1)!.usage!;
    expect(usage.completion_tokens).toBeGreaterThan(0);

    const record = await recorded(res.headers['x-gantry-request-id']!);
    expect(record).toMatchObject({ status: 200, stream: true, completionTokens: usage.completion_tokens });
    expect(record.costUsd).toBeCloseTo(costUsd(PRICING, usage), 12);
    expect(record.costUsd).toBeGreaterThan(0);
  });

  it('messages (Anthropic dialect): close-delimited, ends with message_stop, recorded', async () => {
    const res = await http10('/v1/messages', {
      model: 'gpt-4o-mini',
      max_tokens: 100,
      stream: true,
      messages: [{ role: 'user', content: 'hello from nginx' }],
    });
    expectCloseDelimited(res);
    expect(res.body.trimEnd()).toMatch(/event: message_stop\ndata: .*$/);
    const record = await recorded(res.headers['x-gantry-request-id']!);
    expect(record).toMatchObject({ status: 200, stream: true });
    expect(record.costUsd).toBeGreaterThan(0);
  });

  it('legacy completions: close-delimited, ends with [DONE], recorded', async () => {
    const res = await http10('/v1/completions', {
      model: 'gpt-4o-mini',
      stream: true,
      prompt: 'once upon a time',
    });
    expectCloseDelimited(res);
    expect(res.body.trimEnd().endsWith('data: [DONE]')).toBe(true);
    const record = await recorded(res.headers['x-gantry-request-id']!);
    expect(record.stream).toBe(true);
    expect(record.costUsd).toBeGreaterThan(0);
  });

  it('a non-stream request is answered with a content length as usual', async () => {
    const res = await http10('/v1/chat/completions', {
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'no stream' }],
    });
    expect(res.statusLine).toMatch(/ 200 /);
    expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.body));
    expect(JSON.parse(res.body)).toMatchObject({ object: 'chat.completion' });
  });
});
