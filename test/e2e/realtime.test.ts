/**
 * /v1/realtime end to end: the official openai client's Realtime WebSocket class (and the `ws`
 * client for what it hides) against a real Gantry on loopback, in front of the fake provider's
 * Realtime server. Each response is charged at the deployment's text and audio prices and
 * recorded; refusals come before the upgrade as HTTP errors in SPEC.md's shape.
 */
import { once } from 'node:events';
import { connect } from 'node:net';
import OpenAI, { toFile } from 'openai';
import { OpenAIRealtimeWS } from 'openai/realtime/ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { UsageRecord } from '../../dataplane/src/accounting/usage.ts';
import { fakeAnswer } from '../../dataplane/src/fake-provider/index.ts';
import { realtimeCostUsd, splitUsage, type RealtimeUsage } from '../../dataplane/src/realtime/cost.ts';
import { MAX_SECRET_SESSION_BYTES, MAX_SECRETS_PER_KEY } from '../../dataplane/src/realtime/secrets.ts';
import { formatUsd } from '../../dataplane/src/stores/money.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';
import { until } from '../harness/until.ts';

const KEY = 'sk-realtime';
const BROKE_KEY = 'sk-realtime-broke';
const EMPTY_KEY = 'sk-realtime-empty';
const LIMITED_KEY = 'sk-realtime-limited';
const OTHER_KEY = 'sk-realtime-other';
const MINT_LIMITED_KEY = 'sk-realtime-mint-limited';
const MINTER_KEY = 'sk-realtime-minter';
/** A $1 key whose batch holds ~$0.97 of it (`batch-model`: $0.01 an output token). */
const HOLDING_KEY = 'sk-realtime-holding';
/** For reports believed as sent: the gateway's own count plays no part. */
const REPORTED = { inputTokens: 0, producedTokens: 0, maxOutputTokens: Number.MAX_SAFE_INTEGER };
const PRICING = {
  inputPerMillionTokens: 4,
  outputPerMillionTokens: 16,
  audioInputPerMillionTokens: 32,
  audioOutputPerMillionTokens: 64,
};
const MAX_MESSAGE_BYTES = 64 * 1024;
const IDLE_MS = 1_500;

let stack: Stack;
let wsBase: string;

beforeAll(async () => {
  stack = await startStack(
    ([url]) =>
      [
        deployment({
          name: 'rt',
          model: 'gpt-rt',
          upstreamModel: 'gpt-realtime-up',
          baseUrl: fakeBase(url!),
          capabilities: ['realtime'],
          extra: { pricing: PRICING },
        }),
        deployment({ name: 'chat', model: 'chat-only', baseUrl: fakeBase(url!) }),
        deployment({
          name: 'batch',
          model: 'batch-model',
          baseUrl: fakeBase(url!),
          capabilities: ['chat', 'files', 'batches'],
          pricing: { inputPerMillionTokens: 1, outputPerMillionTokens: 10_000 },
        }),
        tenant('acme'),
        apiKey('rt', KEY, 'acme', { budget: { limitUsd: 100, period: 'monthly' } }),
        apiKey('broke', BROKE_KEY, 'acme', { budget: { limitUsd: 0.01, period: 'monthly' } }),
        apiKey('empty', EMPTY_KEY, 'acme', { budget: { limitUsd: 0.00001, period: 'monthly' } }),
        apiKey('limited', LIMITED_KEY, 'acme', { rateLimit: { requestsPerMinute: 1 } }),
        apiKey('mint-limited', MINT_LIMITED_KEY, 'acme', { rateLimit: { requestsPerMinute: 1 } }),
        apiKey('minter', MINTER_KEY, 'acme'),
        apiKey('holding', HOLDING_KEY, 'acme', { budget: { limitUsd: 1, period: 'monthly' } }),
        tenant('globex', ['chat-only']),
        apiKey('other', OTHER_KEY, 'globex'),
      ].join(''),
    {
      realtime: { maxMessageBytes: MAX_MESSAGE_BYTES, idleTimeoutMs: IDLE_MS, maxSessionsPerKey: 2 },
      // The batch of the held-work test stays unsettled until the test is done with it.
      batchSweepMs: 0,
    },
  );
  wsBase = stack.gateway.url.replace(/^http/, 'ws');
});
afterAll(() => stack.close());

interface Event {
  type: string;
  [field: string]: unknown;
}

/** A `ws` client that keeps every event, so a test can wait for the one it needs. */
class Client {
  readonly events: Event[] = [];
  private waiters: { test: (e: Event) => boolean; resolve: (e: Event) => void }[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;

  constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const event = JSON.parse(String(data)) as Event;
      this.events.push(event);
      this.waiters = this.waiters.filter((w) => (w.test(event) ? (w.resolve(event), false) : true));
    });
    this.closed = new Promise((resolve) =>
      ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })),
    );
  }

  /** The next event of `type`, as the shape the test expects of it. */
  next<T = Event>(type: string): Promise<T> {
    return this.nextEvent(type) as Promise<T>;
  }

  private nextEvent(type: string): Promise<Event> {
    const seen = this.events.find((e) => e.type === type);
    if (seen) {
      this.events.splice(this.events.indexOf(seen), 1);
      return Promise.resolve(seen);
    }
    return new Promise((resolve) =>
      this.waiters.push({
        test: (e) => e.type === type,
        resolve: (e) => {
          this.events.splice(this.events.indexOf(e), 1);
          resolve(e);
        },
      }),
    );
  }

  send(event: object): void {
    this.ws.send(JSON.stringify(event));
  }
}

function open(key: string | undefined, model = 'gpt-rt', protocols?: string[]): Promise<Client> {
  const ws = new WebSocket(
    `${wsBase}/v1/realtime?model=${encodeURIComponent(model)}`,
    protocols,
    key === undefined || protocols ? {} : { headers: { authorization: `Bearer ${key}` } },
  );
  const client = new Client(ws);
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(client));
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += String(c)));
      res.on('end', () => reject(Object.assign(new Error(body), { status: res.statusCode, body })));
    });
    ws.once('error', reject);
  });
}

/** The HTTP refusal of an upgrade: status and SPEC.md body. */
async function refused(key: string | undefined, model?: string, protocols?: string[]) {
  const err = (await open(key, model, protocols).then(
    (c) => {
      c.ws.close();
      throw new Error('upgrade was accepted');
    },
    (e: unknown) => e,
  )) as { status: number; body: string };
  return {
    status: err.status,
    body: JSON.parse(err.body) as { error: { message: string; type: string; code: number } },
  };
}

const say = (text: string) => ({
  type: 'conversation.item.create',
  item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] },
});

async function recordsOf(key: string, n: number): Promise<UsageRecord[]> {
  const today = new Date().toISOString().slice(0, 10);
  return until(`${n} realtime usage records`, async () => {
    const all = await stack.gateway.stores.usage.logs({
      tenant: 'acme',
      from: today,
      to: today,
      limit: 1000,
    });
    const mine = all.filter((r) => r.endpoint === 'realtime' && r.keyId === key && r.status === 200);
    return mine.length >= n ? mine : undefined;
  });
}

const spent = async (keyName: string, limitUsd: number) =>
  (
    await stack.gateway.stores.budgets.state(
      { tenant: 'acme', keyId: `default/${keyName}` },
      { limitUsd, period: 'monthly' },
    )
  ).spentUsd;

describe('Realtime through the official openai client', () => {
  it('answers a text turn with the event protocol, charged at the text prices and recorded', async () => {
    const client = new OpenAI({ baseURL: `${stack.baseURL}`, apiKey: KEY });
    // The SDK always dials wss://; the test gateway speaks plain ws on loopback, so the TLS
    // connection is replaced by a TCP one. Everything above the socket is the SDK's own.
    const rt = new OpenAIRealtimeWS(
      {
        model: 'gpt-rt',
        options: {
          createConnection: (o: { host?: string; port?: number }) => connect(o.port!, o.host),
        } as never,
      },
      client,
    );
    const events: { type: string }[] = [];
    rt.on('event', (e) => events.push(e));
    const created = await new Promise<{ session: { model?: string } }>((resolve, reject) => {
      rt.on('session.created', (e) => resolve(e as never));
      rt.on('error', reject);
    });
    expect(created.session.model).toBe('gpt-rt');
    rt.send({ type: 'session.update', session: { type: 'realtime', output_modalities: ['text'] } });
    rt.send(say('Hello realtime') as never);
    let text = '';
    rt.on('response.output_text.delta', (e) => (text += e.delta));
    const done = new Promise<{ response: { usage?: RealtimeUsage; status?: string } }>((resolve) =>
      rt.on('response.done', (e) => resolve(e as never)),
    );
    rt.send({ type: 'response.create' });
    const { response } = await done;
    rt.close();
    expect(response.status).toBe('completed');
    expect(text).toBe(fakeAnswer('Hello realtime'));
    expect(events.map((e) => e.type)).toEqual(
      expect.arrayContaining([
        'session.updated',
        'conversation.item.added',
        'response.created',
        'response.done',
      ]),
    );
    const usage = response.usage!;
    expect(usage.input_tokens).toBeGreaterThan(0);
    const cost = realtimeCostUsd(PRICING, splitUsage(usage, REPORTED));
    const [record] = await recordsOf('default/rt', 1);
    expect(record).toMatchObject({
      endpoint: 'realtime',
      requestedModel: 'gpt-rt',
      deployment: 'rt',
      promptTokens: usage.input_tokens,
      completionTokens: usage.output_tokens,
      costUsd: cost,
    });
    expect(await spent('rt', 100)).toBeCloseTo(cost, 9);
    // The upstream was dialled with its own model name and credential, never the caller's key.
    const dial = stack.fakes[0]!.requests.find((r) => r.path.startsWith('/v1/realtime'))!;
    expect(dial.path).toBe('/v1/realtime?model=gpt-realtime-up');
    expect(dial.headers.authorization).toBe('Bearer sk-fake');
  });
});

describe('Realtime over ws', () => {
  it('prices audio tokens at the audio rates', async () => {
    const c = await open(KEY);
    await c.next('session.created');
    c.send({ type: 'session.update', session: { output_modalities: ['audio'] } });
    await c.next('session.updated');
    // Half a second of PCM16 at 24 kHz: 5 audio tokens in.
    c.send({ type: 'input_audio_buffer.append', audio: Buffer.alloc(24_000).toString('base64') });
    c.send({ type: 'input_audio_buffer.commit' });
    c.send({ type: 'response.create' });
    const done = await c.next<{ response: { usage: RealtimeUsage } }>('response.done');
    c.ws.close();
    const usage = done.response.usage;
    expect(usage.input_token_details?.audio_tokens).toBe(5);
    expect(usage.output_token_details?.audio_tokens).toBeGreaterThan(0);
    const split = splitUsage(usage, REPORTED);
    const cost = realtimeCostUsd(PRICING, split);
    // Dearer than the same tokens at text prices.
    expect(cost).toBeGreaterThan(
      realtimeCostUsd(PRICING, {
        ...split,
        textIn: split.textIn + split.audioIn,
        audioIn: 0,
        textOut: split.textOut + split.audioOut,
        audioOut: 0,
      }),
    );
    const records = await recordsOf('default/rt', 2);
    expect(records.some((r) => r.costUsd === cost && r.promptTokens === usage.input_tokens)).toBe(true);
  });

  it('takes the browser form of the key as a subprotocol and answers `realtime`', async () => {
    const c = await open(undefined, 'gpt-rt', ['realtime', `openai-insecure-api-key.${KEY}`]);
    expect(c.ws.protocol).toBe('realtime');
    await c.next('session.created');
    c.ws.close();
  });

  it('refuses before the upgrade: no key, a wrong key, a model outside the tenant or without realtime', async () => {
    const none = await refused(undefined);
    expect(none.status).toBe(401);
    expect(none.body.error).toMatchObject({ type: 'authentication_error', code: 401 });
    expect((await refused('sk-wrong')).status).toBe(401);
    expect(
      (await refused(undefined, 'gpt-rt', ['realtime', 'openai-insecure-api-key.sk-wrong'])).status,
    ).toBe(401);
    const other = await refused(OTHER_KEY, 'gpt-rt');
    expect(other.status).toBe(404);
    expect(other.body.error.message).toContain('gpt-rt');
    const chat = await refused(KEY, 'chat-only');
    expect(chat.status).toBe(400);
    expect(chat.body.error.message).toContain('realtime');
    const noModel = await refused(KEY, '');
    expect(noModel.status).toBe(400);
    expect(noModel.body.error.message).toContain('model');
  });

  it('closes a session whose client sends a frame over the limit (1009)', async () => {
    const c = await open(KEY);
    await c.next('session.created');
    c.send({ type: 'input_audio_buffer.append', audio: 'A'.repeat(MAX_MESSAGE_BYTES + 1) });
    expect((await c.closed).code).toBe(1009);
  });

  it('closes an idle session with an error event and 1008', async () => {
    const c = await open(KEY);
    await c.next('session.created');
    const started = Date.now();
    const error = (await c.next('error')) as { error: { message: string; type: string } };
    expect(error.error.message).toContain('without a message');
    const closed = await c.closed;
    expect(closed.code).toBe(1008);
    expect(Date.now() - started).toBeGreaterThanOrEqual(IDLE_MS - 50);
  });

  it('refuses a response.create the budget cannot hold with an error event, keeping the session', async () => {
    const c = await open(BROKE_KEY);
    await c.next('session.created');
    c.send(say('A cheap question'));
    c.send({ type: 'response.create', response: { max_output_tokens: 50 } });
    const first = await c.next<{ response: { usage: RealtimeUsage } }>('response.done');
    expect(first.response.usage.output_tokens).toBeGreaterThan(0);
    c.events.length = 0;
    c.send({ type: 'response.create', event_id: 'evt_dear', response: { max_output_tokens: 100_000 } });
    const error = (await c.next('error')) as {
      error: { type: string; code: number; event_id: string; message: string };
    };
    expect(error.error).toMatchObject({ type: 'budget_exceeded', code: 402, event_id: 'evt_dear' });
    // Nothing reached the upstream: the next event answers the next message.
    c.send({ type: 'session.update', session: { instructions: 'still here' } });
    await c.next('session.updated');
    expect(c.events.filter((e) => e.type === 'response.created')).toEqual([]);
    c.ws.close();
    const [record] = await recordsOf('default/broke', 1);
    expect(await spent('broke', 0.01)).toBeCloseTo(record!.costUsd, 9);
  });

  it("says in a response's 402 how much of the budget the key's unsettled batches hold, as HTTP does", async () => {
    const client = new OpenAI({ baseURL: stack.baseURL, apiKey: HOLDING_KEY, maxRetries: 0 });
    const line = {
      custom_id: 'r',
      method: 'POST',
      url: '/v1/chat/completions',
      body: { model: 'batch-model', messages: [{ role: 'user', content: 'hi' }], max_tokens: 97 },
    };
    const file = await client.files.create({
      file: await toFile(Buffer.from(JSON.stringify(line)), 'in.jsonl'),
      purpose: 'batch',
    });
    const batch = await client.batches.create({
      input_file_id: file.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    // With nothing else in flight, all the key holds is the batch's.
    const budget = { limitUsd: 1, period: 'monthly' as const };
    const keyRef = { tenant: 'acme', keyId: 'default/holding' };
    const held = (await stack.gateway.stores.budgets.state(keyRef, budget)).heldUsd;
    expect(held).toBeGreaterThan(0.9);

    const c = await open(HOLDING_KEY);
    await c.next('session.created');
    c.send(say('A dear question'));
    c.send({ type: 'response.create', event_id: 'evt_held', response: { max_output_tokens: 100_000 } });
    const error = (await c.next('error')) as { error: { type: string; code: number; message: string } };
    expect(error.error).toMatchObject({ type: 'budget_exceeded', code: 402 });
    expect(error.error.message).toContain(
      `(${formatUsd(held)} of it is held for this key's unsettled batches and fine-tuning jobs until they settle)`,
    );
    c.ws.close();
    await client.batches.cancel(batch.id);
  });

  it('refuses a key whose budget is spent before the upgrade (402)', async () => {
    const res = await refused(EMPTY_KEY);
    expect(res.status).toBe(402);
    expect(res.body.error.type).toBe('budget_exceeded');
  });

  it('applies the rate limit at connect and caps open sessions per key', async () => {
    const first = await open(LIMITED_KEY);
    const second = await refused(LIMITED_KEY);
    expect(second.status).toBe(429);
    first.ws.close();

    const a = await open(KEY);
    const b = await open(KEY);
    const third = await refused(KEY);
    expect(third.status).toBe(429);
    expect(third.body.error.message).toContain('2 open Realtime sessions');
    a.ws.close();
    await until('a session slot to free', async () =>
      stack.gateway.app.realtime.sessions.of('acme/default/rt') < 2 ? true : undefined,
    );
    const d = await open(KEY);
    d.ws.close();
    b.ws.close();
    await until('every session of the key to end', async () =>
      stack.gateway.app.realtime.sessions.of('acme/default/rt') === 0 ? true : undefined,
    );
  });

  it('refuses a malformed handshake before taking a slot, and frees what a refused upgrade held', async () => {
    const port = Number(new URL(stack.gateway.url).port);
    /** One upgrade written by hand: its status line and body, once the gateway closes. */
    const raw = (headers: string) =>
      new Promise<{ status: string; body: string }>((resolve, reject) => {
        const s = connect(port, '127.0.0.1', () =>
          s.write(`GET /v1/realtime?model=gpt-rt HTTP/1.1\r\nHost: x\r\n${headers}\r\n`),
        );
        let out = '';
        s.on('data', (d: Buffer) => (out += String(d)));
        s.on('error', reject);
        s.on('close', () => {
          const [head = '', body = ''] = out.split('\r\n\r\n');
          resolve({ status: head.split('\r\n')[0]!, body });
        });
      });
    const base = `Authorization: Bearer ${KEY}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n`;
    const key = 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n';
    for (let i = 0; i < 3; i++) {
      const noKey = await raw(`${base}Sec-WebSocket-Version: 13\r\n`);
      expect(noKey.status).toContain(' 400 ');
      const error = (JSON.parse(noKey.body) as { error: { message: string; type: string } }).error;
      expect(error).toMatchObject({ type: 'invalid_request_error' });
      expect(error.message).toContain('Sec-WebSocket-Key');
    }
    const badKey = await raw(`${base}Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: short\r\n`);
    expect(badKey.body).toContain('Sec-WebSocket-Key');
    const oldVersion = await raw(`${base}${key}Sec-WebSocket-Version: 8\r\n`);
    expect(oldVersion.status).toContain(' 400 ');
    expect(oldVersion.body).toContain('Sec-WebSocket-Version');
    // A subprotocol list `ws` itself refuses, after the upstream was opened: the upstream
    // and the slot are let go when the handshake fails, not held until restart.
    for (let i = 0; i < 2; i++) {
      const dup = await raw(
        `${base}${key}Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: realtime, realtime\r\n`,
      );
      expect(dup.status).toContain(' 400 ');
    }
    await until('the refused upgrades to let their slots go', async () =>
      stack.gateway.app.realtime.sessions.of('acme/default/rt') === 0 ? true : undefined,
    );
    // Both of the key's two sessions can still be opened.
    const a = await open(KEY);
    const b = await open(KEY);
    a.ws.close();
    b.ws.close();
    await until('every session of the key to end', async () =>
      stack.gateway.app.realtime.sessions.of('acme/default/rt') === 0 ? true : undefined,
    );
  });

  it('refuses session.update fields it cannot meter (transcription, session type) with an error event naming them', async () => {
    const c = await open(KEY);
    await c.next('session.created');
    const cases: [string, object][] = [
      ['session.audio.input.transcription', { audio: { input: { transcription: { model: 'whisper-1' } } } }],
      ['session.input_audio_transcription', { input_audio_transcription: { model: 'whisper-1' } }],
      ['session.type', { type: 'transcription' }],
    ];
    for (const [param, session] of cases) {
      c.send({ type: 'session.update', event_id: `evt_${param}`, session });
      const error = await c.next<{ error: { param: string; message: string; event_id: string } }>('error');
      expect(error.error).toMatchObject({ param, event_id: `evt_${param}` });
      expect(error.error.message).toContain(param);
    }
    c.send({ type: 'transcription_session.update', event_id: 'evt_ts', session: {} });
    const beta = await c.next<{ error: { message: string; event_id: string } }>('error');
    expect(beta.error.event_id).toBe('evt_ts');
    expect(beta.error.message).toContain('transcription_session.update');
    // Turning transcription off is always allowed, and nothing refused reached the upstream.
    c.send({ type: 'session.update', session: { audio: { input: { transcription: null } } } });
    await c.next('session.updated');
    expect(c.events.filter((e) => e.type === 'session.updated')).toEqual([]);
    c.ws.close();
    await c.closed;

    const minted = await fetch(`${stack.baseURL}/realtime/client_secrets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        session: {
          type: 'realtime',
          model: 'gpt-rt',
          audio: { input: { transcription: { model: 'whisper-1' } } },
        },
      }),
    });
    expect(minted.status).toBe(400);
    expect(((await minted.json()) as { error: { message: string } }).error.message).toContain(
      'session.audio.input.transcription',
    );
  });

  it('does not charge a response the upstream broke, and closes with 1011', async () => {
    stack.fakes[0]!.setFaults([
      { times: 1, match: { path: '/v1/realtime' }, fault: { type: 'break-stream', afterChunks: 2 } },
    ]);
    const c = await open(KEY);
    await c.next('session.created');
    c.send(say('Break please'));
    c.send({ type: 'response.create' });
    expect((await c.closed).code).toBe(1011);
    const today = new Date().toISOString().slice(0, 10);
    const broken = await until('the broken response record', async () => {
      const all = await stack.gateway.stores.usage.logs({
        tenant: 'acme',
        from: today,
        to: today,
        limit: 1000,
      });
      return all.find((r) => r.endpoint === 'realtime' && r.status === 502);
    });
    expect(broken.costUsd).toBe(0);
  });

  it('answers an upstream that refuses the connection with an HTTP error before the upgrade', async () => {
    stack.fakes[0]!.setFaults([
      { times: 1, match: { path: '/v1/realtime' }, fault: { type: 'status', status: 401 } },
    ]);
    const res = await refused(KEY);
    expect(res.status).toBeGreaterThanOrEqual(500);
    expect(res.body.error.type).toBeDefined();
  });
});

describe('Realtime, a client leaving mid-response', () => {
  it('is charged for the input held and the output produced (499)', async () => {
    stack.fakes[0]!.setFaults([
      { times: 1, match: { path: '/v1/realtime' }, fault: { type: 'slow-stream', chunkDelayMs: 50 } },
    ]);
    const c = await open(KEY);
    await c.next('session.created');
    c.send(say('Leave early'));
    c.send({ type: 'response.create' });
    await c.next('response.output_text.delta');
    c.ws.close();
    const today = new Date().toISOString().slice(0, 10);
    const cut = await until('the cut response record', async () => {
      const all = await stack.gateway.stores.usage.logs({
        tenant: 'acme',
        from: today,
        to: today,
        limit: 1000,
      });
      return all.find((r) => r.endpoint === 'realtime' && r.status === 499);
    });
    expect(cut.completionTokens).toBeGreaterThan(0);
    expect(cut.costUsd).toBeGreaterThan(0);
  });
});

describe('Realtime across deployments, limits and shutdown', () => {
  let second: Stack;
  beforeAll(async () => {
    second = await startStack(
      ([a, b]) =>
        [
          deployment({
            name: 'rt-a',
            model: 'gpt-rt',
            baseUrl: fakeBase(a!),
            priority: 1,
            capabilities: ['realtime'],
          }),
          deployment({
            name: 'rt-b',
            model: 'gpt-rt',
            baseUrl: fakeBase(b!),
            priority: 2,
            capabilities: ['realtime'],
          }),
          tenant('acme'),
          apiKey('rt', KEY, 'acme'),
        ].join(''),
      { fakes: 2, realtime: { maxSessionMs: 400, idleTimeoutMs: 60_000 } },
    );
  });
  afterAll(() => second.close());

  const dial = () => {
    const ws = new WebSocket(`${second.gateway.url.replace(/^http/, 'ws')}/v1/realtime?model=gpt-rt`, {
      headers: { authorization: `Bearer ${KEY}` },
    });
    const upgraded = new Promise<Record<string, string | string[] | undefined>>((resolve, reject) => {
      ws.once('upgrade', (res) => resolve(res.headers));
      ws.once('error', reject);
    });
    return { client: new Client(ws), upgraded };
  };

  it('fails over to the next deployment when the first refuses, and says so on the upgrade', async () => {
    second.fakes[0]!.setFaults([
      { times: 1, match: { path: '/v1/realtime' }, fault: { type: 'status', status: 503 } },
    ]);
    const { client, upgraded } = dial();
    const headers = await upgraded;
    expect(headers['x-gantry-provider']).toBe('rt-b');
    expect(headers['x-gantry-failed']).toBe('rt-a');
    await client.next('session.created');
    // The session is cut at its duration limit with an error event and 1008.
    const error = await client.next<{ error: { message: string } }>('error');
    expect(error.error.message).toContain('duration limit');
    expect((await client.closed).code).toBe(1008);
  });

  it('closes open sessions with 1001 when the gateway shuts down', async () => {
    const { client } = dial();
    await client.next('session.created');
    const closing = second.gateway.close();
    expect((await client.closed).code).toBe(1001);
    await closing;
  });
});

describe('Realtime shutdown with a client that never answers the close frame', () => {
  it('cuts the client at the drain deadline instead of waiting 30 s for the close reply', async () => {
    const quick = await startStack(
      ([url]) =>
        [
          deployment({ name: 'rt', model: 'gpt-rt', baseUrl: fakeBase(url!), capabilities: ['realtime'] }),
          tenant('acme'),
          apiKey('rt', KEY, 'acme'),
        ].join(''),
      { drainTimeoutMs: 200 },
    );
    try {
      const socket = connect(Number(new URL(quick.gateway.url).port), '127.0.0.1');
      socket.on('error', () => undefined);
      await once(socket, 'connect');
      // A hand-written upgrade: this client reads but never writes again, so no close reply.
      socket.write(
        `GET /v1/realtime?model=gpt-rt HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
          `Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nAuthorization: Bearer ${KEY}\r\n\r\n`,
      );
      const [head] = (await once(socket, 'data')) as [Buffer];
      expect(String(head).split('\r\n')[0]).toContain('101');
      const cut = once(socket, 'close');
      await quick.gateway.close();
      await cut;
      expect(socket.destroyed).toBe(true);
    } finally {
      await quick.close().catch(() => undefined);
    }
  });
});

describe('Realtime on a deployment whose provider does not speak it', () => {
  let mixed: Stack;
  beforeAll(async () => {
    mixed = await startStack(([url]) =>
      [
        deployment({
          name: 'rt-claude',
          model: 'gpt-rt',
          provider: 'anthropic',
          baseUrl: fakeBase(url!, 'anthropic'),
          priority: 1,
          capabilities: ['realtime'],
        }),
        deployment({
          name: 'rt-openai',
          model: 'gpt-rt',
          baseUrl: fakeBase(url!),
          priority: 2,
          capabilities: ['realtime'],
        }),
        deployment({
          name: 'claude-only',
          model: 'claude-rt',
          provider: 'anthropic',
          baseUrl: fakeBase(url!, 'anthropic'),
          capabilities: ['chat', 'realtime'],
        }),
        tenant('acme'),
        apiKey('rt', KEY, 'acme'),
      ].join(''),
    );
  });
  afterAll(() => mixed.close());

  const dial = (model: string) => {
    const ws = new WebSocket(`${mixed.gateway.url.replace(/^http/, 'ws')}/v1/realtime?model=${model}`, {
      headers: { authorization: `Bearer ${KEY}` },
    });
    return new Promise<{ status: number; provider: unknown; ws: WebSocket }>((resolve, reject) => {
      ws.once('upgrade', (res) => resolve({ status: 101, provider: res.headers['x-gantry-provider'], ws }));
      ws.once('unexpected-response', (_req, res) => {
        res.resume();
        resolve({ status: res.statusCode ?? 0, provider: undefined, ws });
      });
      ws.once('error', reject);
    });
  };

  it('is never routed to, so its circuit stays closed (a configuration slip, not a provider fault)', async () => {
    // More connects than the breaker's threshold: each is served by the provider that speaks it.
    for (let i = 0; i < 5; i++) {
      const c = await dial('gpt-rt');
      expect(c).toMatchObject({ status: 101, provider: 'rt-openai' });
      c.ws.close();
    }
    for (let i = 0; i < 5; i++) expect((await dial('claude-rt')).status).toBe(400);
    const mint = await fetch(`${mixed.baseURL}/realtime/client_secrets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ session: { type: 'realtime', model: 'claude-rt' } }),
    });
    expect(mint.status).toBe(400);
    expect(mixed.gateway.health.circuitState('rt-claude')).toBe('closed');
    expect(mixed.gateway.health.circuitState('claude-only')).toBe('closed');
    // Its chat traffic is untouched.
    const chat = await fetch(`${mixed.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-rt', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(chat.status).toBe(200);
  });
});

describe('Realtime over HTTP', () => {
  it('tells a plain GET to upgrade (426) and refuses WebRTC offers with the reason', async () => {
    const get = await fetch(`${stack.baseURL}/realtime?model=gpt-rt`, {
      headers: { authorization: `Bearer ${KEY}` },
    });
    expect(get.status).toBe(426);
    expect(get.headers.get('upgrade')).toBe('websocket');
    for (const path of ['/realtime', '/realtime/calls']) {
      const post = await fetch(`${stack.baseURL}${path}?model=gpt-rt`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/sdp' },
        body: 'v=0',
      });
      expect(post.status).toBe(400);
      const body = (await post.json()) as { error: { type: string; message: string } };
      expect(body.error.type).toBe('unsupported_endpoint');
      expect(body.error.message).toContain('WebSocket');
    }
  });
});

describe('Realtime client secrets', () => {
  const openai = (key = KEY) => new OpenAI({ baseURL: stack.baseURL, apiKey: key, maxRetries: 0 });

  it('mints a Gantry secret with the official client that opens the model it names, charged to the minting key', async () => {
    const before = Date.now();
    const minted = await openai().realtime.clientSecrets.create({
      expires_after: { anchor: 'created_at', seconds: 60 },
      session: { type: 'realtime', model: 'gpt-rt', instructions: 'Be brief.', output_modalities: ['text'] },
    });
    expect(minted.value).toMatch(/^ek_gty_/);
    expect(minted.expires_at * 1000).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 60_000);
    expect(minted.session).toMatchObject({ type: 'realtime', model: 'gpt-rt', instructions: 'Be brief.' });
    // The upstream's credential and model name stay inside the gateway.
    expect(JSON.stringify(minted)).not.toMatch(/sk-fake|gpt-realtime-up/);

    // The browser form, without ?model=: the secret names it.
    const c = await open(undefined, '', ['realtime', `openai-insecure-api-key.${minted.value}`]);
    await c.next('session.created');
    // The session configuration of the secret is applied before the client's first event.
    const updated = await c.next<{ session: { instructions?: string; model?: string } }>('session.updated');
    expect(updated.session).toMatchObject({ instructions: 'Be brief.', model: 'gpt-rt' });
    const before2 = (await recordsOf('default/rt', 1)).length;
    c.send(say('Secret hello'));
    c.send({ type: 'response.create' });
    const done = await c.next<{ response: { usage: RealtimeUsage } }>('response.done');
    c.ws.close();
    const records = await recordsOf('default/rt', before2 + 1);
    const cost = realtimeCostUsd(PRICING, splitUsage(done.response.usage, REPORTED));
    expect(
      records.some((r) => r.costUsd === cost && r.promptTokens === done.response.usage.input_tokens),
    ).toBe(true);
  });

  it('the beta sessions route answers the session with its client_secret', async () => {
    const session = await openai().beta.realtime.sessions.create({ model: 'gpt-rt' as never });
    expect(session.client_secret.value).toMatch(/^ek_gty_/);
    const c = await open(session.client_secret.value);
    await c.next('session.created');
    c.ws.close();
  });

  it('keeps a secret to its model and to /v1/realtime, and refuses bad mint requests by name', async () => {
    const { value } = await openai().realtime.clientSecrets.create({
      session: { type: 'realtime', model: 'gpt-rt' },
    });
    const otherModel = await refused(value, 'chat-only');
    expect(otherModel.status).toBe(403);
    expect(otherModel.body.error.message).toContain('gpt-rt only');
    expect((await refused('ek_gty_forged')).status).toBe(401);
    const chat = await fetch(`${stack.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${value}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'chat-only', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(chat.status).toBe(401);

    const mint = (body: unknown, key = KEY) =>
      fetch(`${stack.baseURL}/realtime/client_secrets`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const cases: [unknown, number, string][] = [
      [
        { session: { type: 'realtime', model: 'gpt-rt' }, expires_after: { seconds: 5 } },
        400,
        'expires_after.seconds',
      ],
      [{ session: { type: 'realtime' } }, 400, 'session.model'],
      [{ session: { type: 'transcription', model: 'gpt-rt' } }, 400, 'session.type'],
      [{ session: { type: 'realtime', model: 'chat-only' } }, 400, 'realtime'],
    ];
    for (const [body, status, names] of cases) {
      const res = await mint(body);
      expect(res.status).toBe(status);
      expect(((await res.json()) as { error: { message: string } }).error.message).toContain(names);
    }
    // Another tenant cannot mint for a model it has no access to.
    const other = await mint({ session: { type: 'realtime', model: 'gpt-rt' } }, OTHER_KEY);
    expect(other.status).toBe(404);
  });

  const mintRaw = (body: unknown, key: string, path = '/realtime/client_secrets') =>
    fetch(`${stack.baseURL}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const errorOf = async (res: Response) =>
    ((await res.json()) as { error: { message: string; type: string } }).error;

  it('admits a mint like any request: it counts against the rate limit and a spent budget refuses it', async () => {
    const ok = await mintRaw({ session: { type: 'realtime', model: 'gpt-rt' } }, MINT_LIMITED_KEY);
    expect(ok.status).toBe(200);
    const again = await mintRaw({ session: { type: 'realtime', model: 'gpt-rt' } }, MINT_LIMITED_KEY);
    expect(again.status).toBe(429);
    expect((await errorOf(again)).type).toBe('rate_limit_exceeded');
    const beta = await mintRaw({ model: 'gpt-rt' }, MINT_LIMITED_KEY, '/realtime/sessions');
    expect(beta.status).toBe(429);

    const broke = await mintRaw({ session: { type: 'realtime', model: 'gpt-rt' } }, EMPTY_KEY);
    expect(broke.status).toBe(402);
    expect((await errorOf(broke)).type).toBe('budget_exceeded');
  });

  it('refuses a session configuration too large to keep, naming session', async () => {
    const instructions = 'x'.repeat(MAX_SECRET_SESSION_BYTES);
    const ga = await mintRaw({ session: { type: 'realtime', model: 'gpt-rt', instructions } }, MINTER_KEY);
    expect(ga.status).toBe(400);
    expect((await errorOf(ga)).message).toContain('session');
    const beta = await mintRaw({ model: 'gpt-rt', instructions }, MINTER_KEY, '/realtime/sessions');
    expect(beta.status).toBe(400);
    expect((await errorOf(beta)).message).toContain(`${MAX_SECRET_SESSION_BYTES}`);
  });

  it('caps the unexpired secrets one key holds (429), other keys unaffected', async () => {
    for (let i = 0; i < MAX_SECRETS_PER_KEY; i++) {
      const res = await mintRaw({ session: { type: 'realtime', model: 'gpt-rt' } }, MINTER_KEY);
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    const over = await mintRaw({ session: { type: 'realtime', model: 'gpt-rt' } }, MINTER_KEY);
    expect(over.status).toBe(429);
    expect((await errorOf(over)).message).toContain(
      `${MAX_SECRETS_PER_KEY} unexpired Realtime client secrets`,
    );
    const other = await mintRaw({ session: { type: 'realtime', model: 'gpt-rt' } }, KEY);
    expect(other.status).toBe(200);
  });
});
