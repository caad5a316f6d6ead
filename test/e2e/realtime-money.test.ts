/**
 * Realtime money against an upstream that behaves as OpenAI's does where the fake provider is
 * simpler (test/harness/realtime-upstream.ts): it refuses a bad `session.update`, echoes each
 * response's `max_output_tokens`, answers with long function calls, runs server-VAD turns.
 * Over real WebSockets on loopback, through a real Gantry. Each case was a way to get output
 * held or billed at less than it cost, or counted at none against a tokens-per-minute limit.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { UsageRecord } from '../../dataplane/src/accounting/usage.ts';
import { startRealtimeUpstream, type RealtimeUpstream } from '../harness/realtime-upstream.ts';
import { apiKey, deployment, startStack, tenant, type Stack } from '../harness/stack.ts';
import { until } from '../harness/until.ts';

const PRICING = { inputPerMillionTokens: 4, outputPerMillionTokens: 16 };
/** 4,096 default output tokens at $16/M is $0.0655: a key with $0.01 cannot hold one response. */
const POOR = { budget: { limitUsd: 0.01, period: 'monthly' } };
const RICH = { budget: { limitUsd: 100, period: 'monthly' } };

let stack: Stack;
let plain: RealtimeUpstream;
let vad: RealtimeUpstream;
let racing: RealtimeUpstream;
let stall: RealtimeUpstream;
let wsBase: string;

beforeAll(async () => {
  [plain, vad, racing, stall] = await Promise.all([
    startRealtimeUpstream(),
    startRealtimeUpstream({ vad: true }),
    startRealtimeUpstream({ vad: 'racing' }),
    startRealtimeUpstream({ stall: true }),
  ]);
  const rt = (name: string, up: RealtimeUpstream) =>
    deployment({ name, model: name, baseUrl: up.baseUrl, capabilities: ['realtime'], pricing: PRICING });
  stack = await startStack(() =>
    [
      rt('rt', plain),
      rt('rt-vad', vad),
      rt('rt-race', racing),
      rt('rt-stall', stall),
      tenant('acme'),
      apiKey('poor', 'sk-poor', 'acme', POOR),
      apiKey('poor-vad', 'sk-poor-vad', 'acme', POOR),
      apiKey('vad', 'sk-vad', 'acme', RICH),
      apiKey('poor-race', 'sk-poor-race', 'acme', POOR),
      apiKey('leaver', 'sk-leaver', 'acme', RICH),
      apiKey('tpm', 'sk-tpm', 'acme', { rateLimit: { tokensPerMinute: 2_500 } }),
      apiKey('tpm-poor', 'sk-tpm-poor', 'acme', { ...POOR, rateLimit: { tokensPerMinute: 4_500 } }),
      apiKey('oob', 'sk-oob', 'acme', RICH),
      apiKey('dup', 'sk-dup', 'acme', RICH),
      apiKey('expiry', 'sk-expiry', 'acme', RICH),
    ].join(''),
  );
  wsBase = stack.gateway.url.replace(/^http/, 'ws');
});
/** Every client a test opened: closed after it, so one failing leaves no session to the next. */
const clients: Client[] = [];
afterEach(() => {
  for (const c of clients.splice(0)) c.ws.close();
});
afterAll(async () => {
  await stack.close();
  await Promise.all([plain.close(), vad.close(), racing.close(), stall.close()]);
});

interface Event {
  type: string;
  [field: string]: unknown;
}
interface ErrorEvent {
  error: { type: string; code: unknown; event_id: unknown; message: string };
}
interface ResponseEvent {
  response: { id: string; status: string; usage: { input_tokens: number; output_tokens: number } };
}

/** A `ws` client keeping every event, so a test waits for the one it needs. */
class Client {
  private readonly events: Event[] = [];
  private waiters: { test: (e: Event) => boolean; resolve: (e: Event) => void }[] = [];
  readonly closed: Promise<number>;

  constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const event = JSON.parse(String(data)) as Event;
      const waiter = this.waiters.find((w) => w.test(event));
      if (!waiter) return void this.events.push(event);
      this.waiters.splice(this.waiters.indexOf(waiter), 1);
      waiter.resolve(event);
    });
    this.closed = new Promise((resolve) => ws.on('close', (code) => resolve(code)));
  }

  /** The next event whose type is one of `types` (and that passes `test`). */
  next<T = Event>(types: string | string[], test: (e: Event) => boolean = () => true): Promise<T & Event> {
    const wanted = (e: Event) => [types].flat().includes(e.type) && test(e);
    const seen = this.events.findIndex(wanted);
    if (seen !== -1) return Promise.resolve(this.events.splice(seen, 1)[0] as T & Event);
    return new Promise((resolve) =>
      this.waiters.push({ test: wanted, resolve: (e) => resolve(e as T & Event) }),
    );
  }

  send(event: object): void {
    this.ws.send(JSON.stringify(event));
  }
}

async function open(key: string, model: string): Promise<Client> {
  const ws = new WebSocket(`${wsBase}/v1/realtime?model=${model}`, {
    headers: { authorization: `Bearer ${key}` },
  });
  const c = new Client(ws);
  clients.push(c);
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  await c.next('session.created');
  return c;
}

/** Closes the session and waits until it has ended, every response settled. */
async function closeAndSettle(c: Client): Promise<void> {
  if (c.ws.readyState === WebSocket.OPEN) c.ws.close();
  await c.closed;
  await until('the session to end', async () => (stack.gateway.app.realtime.size === 0 ? true : undefined));
}

async function recordsOf(keyName: string): Promise<UsageRecord[]> {
  const today = new Date().toISOString().slice(0, 10);
  const all = await stack.gateway.stores.usage.logs({ tenant: 'acme', from: today, to: today, limit: 1000 });
  return all.filter((r) => r.endpoint === 'realtime' && r.keyId === `default/${keyName}`);
}

const budgetOf = (keyName: string, limitUsd: number) =>
  stack.gateway.stores.budgets.state(
    { tenant: 'acme', keyId: `default/${keyName}` },
    { limitUsd, period: 'monthly' },
  );

const say = (text: string) => ({
  type: 'conversation.item.create',
  item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] },
});

describe('Realtime money: caps from the upstream, not the client', () => {
  it('holds a response on the default cap after the upstream refused the session.update that lowered it', async () => {
    const c = await open('sk-poor', 'rt');
    c.send({ type: 'response.create', event_id: 'plain' });
    expect((await c.next<ErrorEvent>('error')).error).toMatchObject({ code: 402, event_id: 'plain' });

    c.send({
      type: 'session.update',
      event_id: 'su',
      session: { type: 'realtime', voice: 'no-such-voice', max_output_tokens: 1 },
    });
    expect((await c.next<ErrorEvent>('error')).error).toMatchObject({
      code: 'invalid_value',
      event_id: 'su',
    });

    // The cap of 1 never took: the response is held on 4,096 tokens, which $0.01 cannot cover.
    c.send({ type: 'response.create', event_id: 'after' });
    const answer = await c.next<ErrorEvent>(['error', 'response.created']);
    expect(answer.type).toBe('error');
    expect(answer.error).toMatchObject({ type: 'budget_exceeded', code: 402, event_id: 'after' });
    await closeAndSettle(c);
    expect(await recordsOf('poor')).toEqual([]);
  });

  it('bills a server-VAD response started while a client hold with a lower cap was queued for what the upstream reported', async () => {
    const c = await open('sk-vad', 'rt-race');
    // Server VAD starts a response while the client's own create (cap 1) waits for its hold.
    c.send({ type: 'input_audio_buffer.commit' });
    c.send({ type: 'response.create', event_id: 'mine', response: { max_output_tokens: 1 } });
    const refused = await c.next<ErrorEvent>('error');
    expect(refused.error).toMatchObject({
      code: 'conversation_already_has_active_response',
      event_id: 'mine',
    });
    // The client's next event lets the VAD response finish.
    c.send({ type: 'input_audio_buffer.clear' });
    const done = await c.next<ResponseEvent>('response.done');
    expect(done.response.usage.output_tokens).toBe(4_000);
    await closeAndSettle(c);
    const records = await recordsOf('vad');
    const served = records.filter((r) => r.status === 200);
    expect(served.map((r) => r.completionTokens)).toEqual([4_000]);
    expect(served[0]!.costUsd).toBeCloseTo((4_000 * 16) / 1e6, 9);
    // The client's own create never ran: its hold is released, nothing charged.
    expect(records.filter((r) => r.status !== 200).map((r) => [r.status, r.costUsd])).toEqual([[400, 0]]);
  });

  it('holds a server-VAD response on its own cap, not on a queued client hold it would otherwise take', async () => {
    const c = await open('sk-poor-race', 'rt-race');
    // The client's create (cap 1) fits $0.01; the VAD response (4,096 held) does not.
    c.send({ type: 'input_audio_buffer.commit' });
    c.send({ type: 'response.create', event_id: 'mine', response: { max_output_tokens: 1 } });
    await c.next('response.created');
    expect(
      (await c.next<ErrorEvent>('error', (e) => (e as unknown as ErrorEvent).error.code === 402)).error,
    ).toMatchObject({
      type: 'budget_exceeded',
      event_id: null,
    });
    expect(await c.closed).toBe(1008);
    await closeAndSettle(c);
    // At most the first delta before the cancel; before, all 4,000 tokens on a 1-token hold.
    const charged = (await recordsOf('poor-race')).reduce((n, r) => n + r.costUsd, 0);
    expect(charged).toBeLessThanOrEqual((10 * 4 + 250 * 16) / 1e6 + 1e-9);
    expect((await budgetOf('poor-race', 0.01)).spentUsd).toBeCloseTo(charged, 9);
  });

  it('counts function-call arguments relayed: a client leaving mid-call pays for them', async () => {
    const c = await open('sk-leaver', 'rt-stall');
    c.send({ type: 'response.create' });
    const delta = await c.next<{ delta: string }>('response.function_call_arguments.delta');
    expect(delta.delta).toHaveLength(1_000);
    await closeAndSettle(c);
    const records = await recordsOf('leaver');
    expect(records.map((r) => [r.status, r.completionTokens])).toEqual([[499, 250]]);
    expect(records[0]!.costUsd).toBeCloseTo((250 * 16) / 1e6, 9);
    expect((await budgetOf('leaver', 100)).spentUsd).toBeCloseTo(records[0]!.costUsd, 9);
  });
});

describe('Realtime tokens per minute', () => {
  it('counts each response against the key limit as it starts, refusing one the minute has no room for (429)', async () => {
    const c = await open('sk-tpm', 'rt');
    // Held at 1,000 output tokens and reported at 1,000: the minute has 2,500.
    c.send({ type: 'response.create', event_id: 't1', response: { max_output_tokens: 1_000 } });
    await c.next('response.created');
    expect((await c.next<ResponseEvent>('response.done')).response.usage.output_tokens).toBe(1_000);
    // Now 1,000 in the window; the next reads them again and may write 1,000 more.
    c.send({ type: 'response.create', event_id: 't2', response: { max_output_tokens: 1_000 } });
    const answer = await c.next<ErrorEvent>(['error', 'response.created']);
    expect(answer.type).toBe('error');
    expect(answer.error).toMatchObject({ type: 'rate_limit_exceeded', code: 429, event_id: 't2' });
    expect(answer.error.message).toContain('2500 tokens per minute');
    await closeAndSettle(c);
    expect((await recordsOf('tpm')).map((r) => r.status)).toEqual([200]);
  });

  it('gives a response refused by the budget its rate-limit tokens back', async () => {
    const c = await open('sk-tpm-poor', 'rt');
    // Each needs 4,000 of the minute's 4,500 tokens and $0.064 of the $0.01 left: both 402, not a 429.
    for (const id of ['b1', 'b2']) {
      c.send({ type: 'response.create', event_id: id, response: { max_output_tokens: 4_000 } });
      expect((await c.next<ErrorEvent>('error')).error).toMatchObject({ code: 402, event_id: id });
    }
  });
});

describe('Realtime money: suspicions checked', () => {
  it('a server-VAD response refused its hold ends the session: no turn after turn past the budget', async () => {
    const c = await open('sk-poor-vad', 'rt-vad');
    c.send({ type: 'input_audio_buffer.commit' });
    await c.next('response.created');
    expect((await c.next<ErrorEvent>('error')).error).toMatchObject({ type: 'budget_exceeded', code: 402 });
    // The client speaks again: before, the upstream started the next unpaid turn.
    c.send({ type: 'input_audio_buffer.commit' });
    const outcome = await Promise.race([
      c.closed.then((code) => `closed ${code}`),
      c.next('response.created').then(() => 'another turn'),
    ]);
    expect(outcome).toBe('closed 1008');
    await closeAndSettle(c);
    // At most the first delta before the cancel, charged once.
    const records = await recordsOf('poor-vad');
    expect(records.length).toBeLessThanOrEqual(1);
    const charged = records.reduce((n, r) => n + r.costUsd, 0);
    expect(charged).toBeLessThanOrEqual((250 * 16) / 1e6 + 1e-9);
    expect((await budgetOf('poor-vad', 0.01)).spentUsd).toBeCloseTo(charged, 9);
  });

  it('an out-of-band response leaves the conversation the next hold covers as it was', async () => {
    const up = stall.nextSession();
    const c = await open('sk-oob', 'rt-stall');
    const session = await up;
    const turn = async (response: object): Promise<void> => {
      c.send({ type: 'response.create', response });
      await c.next('response.created');
      session.finish();
      await c.next('response.done');
    };
    c.send(say('x'.repeat(40_000)));
    await turn({ max_output_tokens: 10 });
    await turn({ conversation: 'none', max_output_tokens: 1 });
    c.send({ type: 'response.create', response: { max_output_tokens: 10 } });
    await c.next('response.created');
    // About 10,000 input tokens at $4/M and 10 output at $16/M; before, about 6 tokens of input.
    expect((await budgetOf('oob', 100)).heldUsd).toBeGreaterThan(0.039);
    session.finish();
    await c.next('response.done');
    await closeAndSettle(c);
  });

  it('a duplicate response.done, or one without an id, takes no other response hold', async () => {
    const up = stall.nextSession();
    const c = await open('sk-dup', 'rt-stall');
    const session = await up;
    c.send({ type: 'response.create', response: { max_output_tokens: 100 } });
    const first = await c.next<ResponseEvent>('response.created');
    session.finish();
    const firstDone = await c.next<ResponseEvent>('response.done');
    // While the second create's hold waits for its response.created, the upstream repeats itself.
    session.beforeRespond = () => {
      session.send({ type: 'response.done', response: firstDone.response });
      session.send({ type: 'response.done', response: { ...firstDone.response, id: undefined } });
    };
    c.send({ type: 'response.create', response: { max_output_tokens: 100 } });
    const second = await c.next<ResponseEvent>('response.created');
    expect(second.response.id).not.toBe(first.response.id);
    session.finish();
    await c.next('response.done', (e) => (e as unknown as ResponseEvent).response.id === second.response.id);
    await closeAndSettle(c);
    const records = await recordsOf('dup');
    expect(records.map((r) => [r.status, r.completionTokens])).toEqual([
      [200, 100],
      [200, 100],
    ]);
    const charged = records.reduce((n, r) => n + r.costUsd, 0);
    expect((await budgetOf('dup', 100)).spentUsd).toBeCloseTo(charged, 9);
  });

  it('a response cut by the upstream ending the session at its duration limit is charged what it produced', async () => {
    const up = stall.nextSession();
    const c = await open('sk-expiry', 'rt-stall');
    const session = await up;
    c.send({ type: 'response.create' });
    await c.next('response.function_call_arguments.delta');
    session.send({
      type: 'error',
      error: {
        type: 'invalid_request_error',
        code: 'session_expired',
        message: 'Your session hit the maximum duration of 60 minutes.',
      },
    });
    session.close(1000, '');
    await c.closed;
    await closeAndSettle(c);
    const records = await recordsOf('expiry');
    expect(records.map((r) => r.completionTokens)).toEqual([250]);
    expect(records[0]!.costUsd).toBeCloseTo((250 * 16) / 1e6, 9);
  });
});
