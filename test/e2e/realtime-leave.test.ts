/**
 * Realtime money when the client leaves mid-way, over real WebSockets on loopback against a
 * small upstream this file drives step by step: a response cut short is priced audio apart from
 * text; one forwarded but not yet started is charged its input; the session's instructions and
 * tools are input too, and an out-of-band response's own input items; the upstream's events
 * after the session ended take no hold.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import type { UsageRecord } from '../../dataplane/src/accounting/usage.ts';
import { itemTokens } from '../../dataplane/src/realtime/events.ts';
import { apiKey, deployment, startStack, tenant, type Stack } from '../harness/stack.ts';
import { until } from '../harness/until.ts';

const PRICING = {
  inputPerMillionTokens: 4,
  outputPerMillionTokens: 16,
  audioInputPerMillionTokens: 32,
  audioOutputPerMillionTokens: 64,
};
const RICH = { budget: { limitUsd: 100, period: 'monthly' as const } };
type Json = Record<string, unknown>;

/** What the upstream does with a `response.create`, set by each test. */
let onCreate: (ws: WebSocket, e: Json) => void = () => undefined;
/** Every client event the upstream got, by type. */
const received: string[] = [];
const server = createServer((_q, r) => r.writeHead(404).end());
const wss = new WebSocketServer({ server });
wss.on('connection', (ws) => {
  ws.send(JSON.stringify({ type: 'session.created', session: { type: 'realtime', model: 'up' } }));
  ws.on('message', (data) => {
    const e = JSON.parse(String(data)) as Json;
    received.push(String(e.type));
    // Applied as asked, echoed as OpenAI does.
    if (e.type === 'session.update')
      return ws.send(
        JSON.stringify({ type: 'session.updated', session: { model: 'up', ...(e.session as Json) } }),
      );
    if (e.type !== 'response.create') return;
    onCreate(ws, e);
  });
});

let stack: Stack;
let wsBase: string;
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const up = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  stack = await startStack(
    () =>
      [
        deployment({ name: 'rt', model: 'rt', baseUrl: up, capabilities: ['realtime'], pricing: PRICING }),
        tenant('acme'),
        apiKey('audio', 'sk-audio', 'acme', RICH),
        apiKey('queued', 'sk-queued', 'acme', RICH),
        apiKey('late', 'sk-late', 'acme', RICH),
        apiKey('scan', 'sk-scan', 'acme', RICH),
        apiKey('prompt', 'sk-prompt', 'acme', RICH),
        apiKey('prompt2', 'sk-prompt2', 'acme', RICH),
        apiKey('oob', 'sk-oob', 'acme', RICH),
      ].join(''),
    // One session may use the whole allowance: the scan test below is about the key's total.
    { realtime: { maxScannedCharsPerMinute: 1_000_000, minScannedCharsPerSession: 1_000_000 } },
  );
  wsBase = stack.gateway.url.replace(/^http/, 'ws');
});
afterAll(async () => {
  await stack.close();
  wss.close();
  await new Promise((resolve) => server.close(resolve));
});

/** A client socket keeping every event it got, and a way to wait for one. */
async function open(key: string): Promise<{ ws: WebSocket; next(type: string): Promise<Json> }> {
  const ws = new WebSocket(`${wsBase}/v1/realtime?model=rt`, { headers: { authorization: `Bearer ${key}` } });
  const seen: Json[] = [];
  const waiters: { type: string; resolve: (e: Json) => void }[] = [];
  ws.on('message', (data) => {
    const e = JSON.parse(String(data)) as Json;
    const w = waiters.findIndex((x) => x.type === e.type);
    if (w === -1) return void seen.push(e);
    waiters.splice(w, 1)[0]!.resolve(e);
  });
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  const next = (type: string) => {
    const at = seen.findIndex((e) => e.type === type);
    if (at !== -1) return Promise.resolve(seen.splice(at, 1)[0]!);
    return new Promise<Json>((resolve) => waiters.push({ type, resolve }));
  };
  await next('session.created');
  return { ws, next };
}

async function leave(ws: WebSocket): Promise<void> {
  const closed = new Promise((resolve) => ws.once('close', resolve));
  ws.close();
  await closed;
  await until('the session to end', async () => (stack.gateway.app.realtime.size === 0 ? true : undefined));
}

async function recordsOf(keyName: string): Promise<UsageRecord[]> {
  const today = new Date().toISOString().slice(0, 10);
  const all = await stack.gateway.stores.usage.logs({ tenant: 'acme', from: today, to: today, limit: 1000 });
  return all.filter((r) => r.endpoint === 'realtime' && r.keyId === `default/${keyName}`);
}

/** `seconds` of PCM16 at 24 kHz, base64: 10 tokens a second. */
const audio = (seconds: number) => Buffer.alloc(48_000 * seconds).toString('base64');

describe('Realtime: the client leaves', () => {
  it('prices a cut-short audio response at the audio rates, input and output', async () => {
    onCreate = (ws) => {
      ws.send(JSON.stringify({ type: 'response.created', response: { id: 'resp_a' } }));
      ws.send(
        JSON.stringify({ type: 'response.output_audio.delta', response_id: 'resp_a', delta: audio(10) }),
      );
    };
    const c = await open('sk-audio');
    c.ws.send(JSON.stringify({ type: 'input_audio_buffer.append', audio: audio(30) }));
    c.ws.send(JSON.stringify({ type: 'input_audio_buffer.commit' }));
    c.ws.send(JSON.stringify({ type: 'response.create' }));
    await c.next('response.output_audio.delta');
    await leave(c.ws);
    const [record] = await recordsOf('audio');
    expect(record).toMatchObject({ status: 499, promptTokens: 300, completionTokens: 100 });
    // 300 audio tokens in at $32/M, 100 out at $64/M (as text it was $0.0028).
    expect(record!.costUsd).toBeCloseTo((300 * 32 + 100 * 64) / 1e6, 9);
  });
});

describe('Realtime: the client leaves before the response started', () => {
  it('charges the input of a response forwarded upstream but not yet started', async () => {
    let received!: () => void;
    const forwarded = new Promise<void>((resolve) => (received = resolve));
    onCreate = () => received();
    const c = await open('sk-queued');
    const text = 'row ok; '.repeat(50_000);
    c.ws.send(
      JSON.stringify({
        type: 'conversation.item.create',
        item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] },
      }),
    );
    c.ws.send(JSON.stringify({ type: 'response.create' }));
    await forwarded;
    await leave(c.ws);
    const [record] = await recordsOf('queued');
    expect(record!.status).toBe(499);
    expect(record!.promptTokens).toBeGreaterThan(text.length / 4);
    expect(record!.costUsd).toBeCloseTo((record!.promptTokens * 4) / 1e6, 9);
    expect(record!.costUsd).toBeGreaterThan(0.39);
  });
});

describe('Realtime: instructions and tools are input', () => {
  it("holds and charges a first response cut short for the session's instructions and tools", async () => {
    const instructions = 'You are a careful phone agent; confirm every order number aloud. '.repeat(64);
    const tools = [
      {
        type: 'function',
        name: 'lookup_order',
        description: 'Find an order by its number',
        parameters: { type: 'object', properties: { order: { type: 'string' } }, required: ['order'] },
      },
    ];
    const promptTokens = Math.ceil(instructions.length / 4) + Math.ceil(JSON.stringify(tools).length / 4);
    onCreate = (ws) => {
      ws.send(JSON.stringify({ type: 'response.created', response: { id: 'resp_p' } }));
      ws.send(
        JSON.stringify({ type: 'response.output_text.delta', response_id: 'resp_p', delta: 'Hello!!!' }),
      );
    };
    const c = await open('sk-prompt');
    c.ws.send(
      JSON.stringify({
        type: 'session.update',
        session: { type: 'realtime', instructions, tools, max_output_tokens: 100 },
      }),
    );
    await c.next('session.updated');
    c.ws.send(JSON.stringify({ type: 'response.create' }));
    await c.next('response.output_text.delta');
    // The hold covers the prompt at the dearest input rate (audio, $32/M), beside 100 tokens of output.
    const held = await stack.gateway.stores.budgets.state(
      { tenant: 'acme', keyId: 'default/prompt' },
      RICH.budget,
    );
    await leave(c.ws);
    expect(instructions.length).toBeGreaterThan(4000);
    expect(held.heldUsd).toBeGreaterThanOrEqual((promptTokens * 32 + 100 * 64) / 1e6);
    const [record] = await recordsOf('prompt');
    // No response.done: the gateway's own count, the prompt as text input (it was 0 input, $0.000032).
    expect(record).toMatchObject({ status: 499, promptTokens, completionTokens: 2 });
    expect(record!.costUsd).toBeCloseTo((promptTokens * 4 + 2 * 16) / 1e6, 9);
  });
});

describe('Realtime: instructions and tools after a response.done', () => {
  it('counts them once: the reported input already includes them', async () => {
    const instructions = 'Answer in one short sentence. '.repeat(150);
    const promptTokens = Math.ceil(instructions.length / 4);
    let creates = 0;
    onCreate = (ws) => {
      const id = `resp_${++creates}`;
      ws.send(JSON.stringify({ type: 'response.created', response: { id } }));
      if (creates === 1) {
        const usage = { input_tokens: promptTokens + 5, output_tokens: 10 };
        ws.send(JSON.stringify({ type: 'response.done', response: { id, status: 'completed', usage } }));
      } else ws.send(JSON.stringify({ type: 'response.output_text.delta', response_id: id, delta: 'Hi' }));
    };
    const c = await open('sk-prompt2');
    c.ws.send(JSON.stringify({ type: 'session.update', session: { type: 'realtime', instructions } }));
    await c.next('session.updated');
    c.ws.send(JSON.stringify({ type: 'response.create' }));
    await c.next('response.done');
    c.ws.send(JSON.stringify({ type: 'response.create' }));
    await c.next('response.output_text.delta');
    await leave(c.ws);
    const cut = (await recordsOf('prompt2')).find((r) => r.status === 499);
    // The first response's input and output, once: 2x the instructions would be double counted.
    expect(cut).toMatchObject({ promptTokens: promptTokens + 5 + 10, completionTokens: 1 });
  });
});

describe("Realtime: an out-of-band response's own input", () => {
  it('charges a response cut short for its input items, not the conversation it does not read', async () => {
    const item = (text: string) => ({
      type: 'message',
      role: 'user',
      content: [{ type: 'input_text', text }],
    });
    const input = [
      item('The parcel arrived two days late. '.repeat(70)),
      item('The box was dented on one side. '.repeat(70)),
    ];
    const inputTokens = input.reduce((n, i) => n + itemTokens(i), 0);
    onCreate = (ws) => {
      ws.send(JSON.stringify({ type: 'response.created', response: { id: 'resp_oob' } }));
      ws.send(
        JSON.stringify({ type: 'response.output_text.delta', response_id: 'resp_oob', delta: 'Billing' }),
      );
    };
    const c = await open('sk-oob');
    c.ws.send(
      JSON.stringify({ type: 'conversation.item.create', item: item('Hi, my card was charged twice.') }),
    );
    c.ws.send(JSON.stringify({ type: 'response.create', response: { conversation: 'none', input } }));
    await c.next('response.output_text.delta');
    await leave(c.ws);
    expect(JSON.stringify(input).length).toBeGreaterThan(4000);
    const [record] = await recordsOf('oob');
    // Its own items, not the conversation's one (it was 24 input tokens, the conversation's item).
    expect(record).toMatchObject({ status: 499, promptTokens: inputTokens, completionTokens: 2 });
    expect(record!.costUsd).toBeCloseTo((inputTokens * 4 + 2 * 16) / 1e6, 9);
  });
});

describe('Realtime: the upstream after the session ended', () => {
  it('takes no hold for a response the upstream starts after the session ended', async () => {
    let busy!: (ws: WebSocket) => void;
    const paused = new Promise<WebSocket>((resolve) => (busy = resolve));
    // Busy: the upstream reads nothing more (the gateway's close frame included) until resumed.
    onCreate = (ws) => {
      ws.pause();
      busy(ws);
    };
    const c = await open('sk-late');
    c.ws.send(JSON.stringify({ type: 'response.create' }));
    const up = await paused;
    await leave(c.ws);
    // Now, the session over, the upstream starts the response.
    const upClosed = new Promise((resolve) => up.once('close', resolve));
    up.send(JSON.stringify({ type: 'response.created', response: { id: 'resp_late' } }));
    up.send(
      JSON.stringify({
        type: 'response.output_text.delta',
        response_id: 'resp_late',
        delta: 'x'.repeat(4_000),
      }),
    );
    up.resume();
    await upClosed;
    // A whole second session on the key, settled: the late events were handled long before.
    onCreate = (ws) => {
      ws.send(JSON.stringify({ type: 'response.created', response: { id: 'resp_2' } }));
      ws.send(
        JSON.stringify({
          type: 'response.done',
          response: { id: 'resp_2', status: 'completed', usage: { input_tokens: 10, output_tokens: 10 } },
        }),
      );
    };
    const second = await open('sk-late');
    second.ws.send(JSON.stringify({ type: 'response.create' }));
    await second.next('response.done');
    await leave(second.ws);
    const records = await recordsOf('late');
    expect(records.map((r) => r.status).sort()).toEqual([200, 499]);
    const budget = await stack.gateway.stores.budgets.state(
      { tenant: 'acme', keyId: 'default/late' },
      RICH.budget,
    );
    expect(budget.heldUsd).toBe(0);
  });
});

describe('Realtime: guardrail scanning per key', () => {
  it('refuses, unscanned, text past the per-minute scanning allowance (429) and forwards what fits', async () => {
    const c = await open('sk-scan');
    const item = (text: string, id: string) =>
      JSON.stringify({
        type: 'conversation.item.create',
        event_id: id,
        item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] },
      });
    received.length = 0;
    c.ws.send(item('a'.repeat(600_000), 'first'));
    c.ws.send(item('b'.repeat(600_000), 'second'));
    c.ws.send(item('small', 'third'));
    c.ws.send(JSON.stringify({ type: 'input_audio_buffer.clear', event_id: 'fence' }));
    const error = (await c.next('error')) as { error: { type: string; code: number; event_id: string } };
    expect(error.error).toMatchObject({ type: 'rate_limit_exceeded', code: 429, event_id: 'second' });
    await until('the fence upstream', async () =>
      received.includes('input_audio_buffer.clear') ? true : undefined,
    );
    expect(received).toEqual([
      'conversation.item.create',
      'conversation.item.create',
      'input_audio_buffer.clear',
    ]);
    await leave(c.ws);
  });
});
