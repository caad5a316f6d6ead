/**
 * The guardrail scanning allowance of Realtime sessions: a real Gantry on loopback in front of
 * the fake provider's Realtime server, `ws` clients. The key's total on the pod bounds the CPU
 * (more sessions, or closing and reopening, get no more of it); each holder (a session opened
 * with the key, or all sessions of one client secret) gets at most its share, so one end user
 * cannot starve the key's others; text no check would read is never counted.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { RequestHeaders } from '../../dataplane/src/brand.ts';
import { MAX_REFUSALS_IN_A_ROW } from '../../dataplane/src/realtime/client-flow.ts';
import { apiKey, deployment, fakeBase, manifest, startStack, tenant, type Stack } from '../harness/stack.ts';
import { until } from '../harness/until.ts';

const LIMIT = 1_000;
const SESSIONS = 4;
/** LIMIT split SESSIONS ways (the floor is below it). */
const SHARE = 250;

let stack: Stack;
let wsBase = '';

beforeAll(async () => {
  stack = await startStack(
    ([url]) =>
      [
        deployment({
          name: 'rt',
          model: 'gpt-rt',
          baseUrl: fakeBase(url!),
          capabilities: ['realtime', 'chat'],
        }),
        manifest('GuardrailPolicy', 'nothing', {
          promptInjection: { action: 'off' },
          secrets: { action: 'off' },
          pii: { action: 'off' },
          toxicity: { action: 'off' },
        }),
        tenant('acme'),
        tenant('unguarded', ['*'], { guardrails: { policyRef: { name: 'nothing' } } }),
        apiKey('one', 'sk-sb-one', 'acme'),
        apiKey('two', 'sk-sb-two', 'acme'),
        apiKey('backend', 'sk-sb-backend', 'acme'),
        apiKey('backend2', 'sk-sb-backend2', 'acme'),
        apiKey('crowd', 'sk-sb-crowd', 'acme'),
        apiKey('big', 'sk-sb-big', 'acme'),
        apiKey('free', 'sk-sb-free', 'unguarded'),
        apiKey('optout', 'sk-sb-optout', 'acme'),
        apiKey('traced', 'sk-sb-traced', 'acme'),
      ].join(''),
    {
      realtime: {
        maxScannedCharsPerMinute: LIMIT,
        maxSessionsPerKey: SESSIONS,
        minScannedCharsPerSession: 100,
      },
    },
  );
  wsBase = stack.gateway.url.replace(/^http/, 'ws');
});
afterAll(() => stack.close());
const opened: WebSocket[] = [];
afterEach(async () => {
  for (const ws of opened.splice(0)) ws.terminate();
  await until('every session to end', async () => (stack.gateway.app.realtime.size === 0 ? true : undefined));
});

interface Event {
  type: string;
  error?: { type: string; code: number; message: string; event_id: string | null };
}

/** A client secret minted by `key` (what a backend hands one browser user). */
async function mint(key: string): Promise<string> {
  const res = await fetch(`${stack.baseURL}/realtime/client_secrets`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ session: { type: 'realtime', model: 'gpt-rt' } }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { value: string }).value;
}

const item = (text: string, id: string): string =>
  JSON.stringify({
    type: 'conversation.item.create',
    event_id: id,
    item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] },
  });

/** A client socket keeping every event, and a way to wait for one of a type. */
async function open(key: string, headers: Record<string, string> = {}) {
  const ws = new WebSocket(`${wsBase}/v1/realtime?model=gpt-rt`, {
    headers: { authorization: `Bearer ${key}`, ...headers },
  });
  opened.push(ws);
  const seen: Event[] = [];
  const waiters: { types: string[]; resolve: (e: Event) => void }[] = [];
  ws.on('message', (data) => {
    const e = JSON.parse(String(data)) as Event;
    const w = waiters.findIndex((x) => x.types.includes(e.type));
    if (w === -1) return void seen.push(e);
    waiters.splice(w, 1)[0]!.resolve(e);
  });
  const closed = new Promise<number>((resolve) => ws.once('close', resolve));
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  /** The next event of one of `types`. */
  const next = (...types: string[]): Promise<Event> => {
    const at = seen.findIndex((e) => types.includes(e.type));
    if (at !== -1) return Promise.resolve(seen.splice(at, 1)[0]!);
    return new Promise((resolve) => waiters.push({ types, resolve }));
  };
  await next('session.created');
  /** Sends a user text item; resolves with the upstream's `conversation.item.done` or the gateway's error. */
  const say = (chars: number, id: string): Promise<Event> => {
    ws.send(item('a'.repeat(chars), id));
    return next('conversation.item.done', 'error');
  };
  /** Closes it and waits until the gateway holds `remaining` sessions. */
  const leave = async (remaining = 0) => {
    ws.close();
    await closed;
    await until('the session to end', async () =>
      stack.gateway.app.realtime.size === remaining ? true : undefined,
    );
  };
  return { ws, say, next, leave, closed, seen };
}

describe('Realtime: guardrail scanning, a share per holder within the key total', () => {
  it('serves one end user while another (a client secret of the same key) is over its share; reconnecting gets that user no more', async () => {
    const mallorySecret = await mint('sk-sb-backend');
    const mallory = await open(mallorySecret);
    const alice = await open(await mint('sk-sb-backend'));
    expect((await mallory.say(SHARE, 'm1')).type).toBe('conversation.item.done');
    const refused = await mallory.say(10, 'm2');
    expect(refused.error).toMatchObject({ type: 'rate_limit_exceeded', code: 429, event_id: 'm2' });
    expect(refused.error?.message).toMatch(
      /^the share of this client secret's sessions is 250 characters of text for the guardrails to scan a minute, 250 of them used; this event's 10 do not fit; retry after \d+s$/,
    );
    // Before, Mallory's one event had spent the key's whole allowance and Alice was refused.
    expect((await alice.say(10, 'a1')).type).toBe('conversation.item.done');

    // Mallory reconnecting with her secret is the same user: no new share.
    await mallory.leave(1);
    const back = await open(mallorySecret);
    expect((await back.say(10, 'm3')).error?.code).toBe(429);
    expect((await alice.say(10, 'a2')).type).toBe('conversation.item.done');
  });

  it('is one share for all the sessions of one client secret, reopened or concurrent', async () => {
    const secret = await mint('sk-sb-backend2');
    const first = await open(secret);
    expect((await first.say(200, 'f1')).type).toBe('conversation.item.done');
    const second = await open(secret);
    expect((await second.say(100, 's1')).error?.code).toBe(429);
    expect((await second.say(50, 's2')).type).toBe('conversation.item.done');
    await first.leave(1);
    await second.leave(0);
    const again = await open(secret);
    expect((await again.say(1, 'r1')).error?.code).toBe(429);
  });

  it("bounds the key's total across many sessions, opened at once or one after another", async () => {
    // The most sessions the key may hold, each taking its share: together the key's total.
    const sessions = [];
    for (let i = 0; i < SESSIONS; i++) sessions.push(await open('sk-sb-one'));
    for (const [i, s] of sessions.entries())
      expect((await s.say(SHARE, `full${i}`)).type).toBe('conversation.item.done');
    // Closing and reopening, with the key or with fresh secrets: new holders, but no new total.
    await sessions.pop()!.leave(SESSIONS - 1);
    const reopened = await open('sk-sb-one');
    const withSecret = await open(await mint('sk-sb-one')).catch(() => undefined);
    expect(withSecret).toBeUndefined(); // the key holds its most sessions
    await sessions.pop()!.leave(SESSIONS - 1);
    const secretUser = await open(await mint('sk-sb-one'));
    for (const [s, id] of [
      [reopened, 'k1'],
      [secretUser, 'k2'],
    ] as const) {
      const refused = await s.say(1, id);
      expect(refused.error).toMatchObject({ type: 'rate_limit_exceeded', code: 429, event_id: id });
      // Its own share, not the key's other users' traffic.
      expect(refused.error?.message).toMatch(
        /^the guardrails cannot scan more text for this (session|client secret's sessions) now \(its share: 250 characters of text for the guardrails to scan a minute, 0 of them used\); retry after \d+s$/,
      );
      expect(refused.error?.message).not.toMatch(/key/);
    }
    // Another key has its own total.
    const other = await open('sk-sb-two');
    expect((await other.say(SHARE, 'o1')).type).toBe('conversation.item.done');
  });

  it("does not close a session refused for the key's total, however often it retries; its own overuse does close it", async () => {
    const mallory = await open(await mint('sk-sb-crowd'));
    expect((await mallory.say(SHARE, 'm1')).type).toBe('conversation.item.done');
    for (let i = 0; i < LIMIT / SHARE - 1; i++) {
      const filler = await open('sk-sb-crowd');
      expect((await filler.say(SHARE, `fill${i}`)).type).toBe('conversation.item.done');
      await filler.leave(1);
    }
    const alice = await open(await mint('sk-sb-crowd'));
    // The key's total is spent; Alice's app retries past the refusals-in-a-row rule.
    const retries = MAX_REFUSALS_IN_A_ROW + 20;
    for (let i = 0; i < retries; i++) alice.ws.send(item('hello', `r${i}`));
    // Text no check must read (none here) is forwarded: Alice is still served and open.
    alice.ws.send(item('', 'empty'));
    const outcome = await Promise.race([
      alice.next('conversation.item.done').then((e) => e.type),
      alice.closed.then((code) => `closed ${code}`),
    ]);
    expect(outcome).toBe('conversation.item.done');
    const errors = alice.seen.filter((e) => e.type === 'error');
    expect(errors).toHaveLength(retries);
    expect(errors.every((e) => e.error?.type === 'rate_limit_exceeded')).toBe(true);
    expect(alice.ws.readyState).toBe(WebSocket.OPEN);

    // Mallory's refusals are over her own share: they count, and the run closes her.
    for (let i = 0; i < MAX_REFUSALS_IN_A_ROW; i++) mallory.ws.send(item('hello', `m${i}`));
    expect(await mallory.closed).toBe(1008);
  });

  it('gives each session opened with the key its own share, even when the callers send the same x-request-id', async () => {
    // The holder was `session:<request id>`, and the request id is the caller's own header when
    // well-formed: the second session found the first's share spent and was refused.
    const a = await open('sk-sb-traced', { 'x-request-id': 'trace-1' });
    const b = await open('sk-sb-traced', { 'x-request-id': 'trace-1' });
    expect((await a.say(SHARE, 'a1')).type).toBe('conversation.item.done');
    expect((await b.say(10, 'b1')).type).toBe('conversation.item.done');
    expect((await a.say(10, 'a2')).error?.code).toBe(429);
  });

  it('says an event bigger than a share can never pass, not when to retry', async () => {
    const s = await open('sk-sb-big');
    for (const [chars, id] of [
      [SHARE + 1, 'big'],
      [LIMIT + 1, 'bigger'],
    ] as const) {
      const refused = await s.say(chars, id);
      expect(refused.error).toMatchObject({ type: 'request_too_large', code: 413, event_id: id });
      expect(refused.error?.message).toBe(
        `this event carries ${chars} characters of text for the guardrails to scan, more than the share of this session (250 a minute); it can never pass: send the text in smaller events`,
      );
    }
    // Nothing was taken: the share is whole.
    expect((await s.say(SHARE, 'fits')).type).toBe('conversation.item.done');
  });

  it('never counts text no check reads: a policy with every check off, or the guard header opting out', async () => {
    const free = await open('sk-sb-free');
    for (const id of ['f1', 'f2', 'f3'])
      expect((await free.say(800, id)).type).toBe('conversation.item.done');
    await free.leave();

    const optout = await open('sk-sb-optout', { [RequestHeaders.guard]: 'none' });
    for (const id of ['n1', 'n2', 'n3'])
      expect((await optout.say(800, id)).type).toBe('conversation.item.done');
    await optout.leave();

    // The opted-out text was not counted for the key: its checked sessions still have the whole total.
    for (let i = 0; i < LIMIT / SHARE; i++) {
      const checked = await open('sk-sb-optout');
      expect((await checked.say(SHARE, `c${i}`)).type).toBe('conversation.item.done');
      await checked.leave();
    }
  });
});
