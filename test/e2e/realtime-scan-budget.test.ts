/**
 * The guardrail scanning allowance of Realtime sessions is the key's on this pod, not each
 * session's: a real Gantry on loopback in front of the fake provider's Realtime server, `ws`
 * clients. Closing and reopening gets no new allowance; another key has its own; text no check
 * would read (every check off, or all opted out by the guard header) is never counted.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { RequestHeaders } from '../../dataplane/src/brand.ts';
import { apiKey, deployment, fakeBase, manifest, startStack, tenant, type Stack } from '../harness/stack.ts';
import { until } from '../harness/until.ts';

const LIMIT = 1_000;

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
        apiKey('free', 'sk-sb-free', 'unguarded'),
        apiKey('optout', 'sk-sb-optout', 'acme'),
      ].join(''),
    { realtime: { maxScannedCharsPerMinute: LIMIT } },
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
    ws.send(
      JSON.stringify({
        type: 'conversation.item.create',
        event_id: id,
        item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'a'.repeat(chars) }] },
      }),
    );
    return next('conversation.item.done', 'error');
  };
  const leave = async () => {
    const closed = new Promise((resolve) => ws.once('close', resolve));
    ws.close();
    await closed;
    await until('the session to end', async () => (stack.gateway.app.realtime.size === 0 ? true : undefined));
  };
  return { say, leave };
}

describe('Realtime: guardrail scanning allowance per key', () => {
  it('is not renewed by a new session of the same key, and leaves other keys alone', async () => {
    const a = await open('sk-sb-one');
    expect((await a.say(800, 'a1')).type).toBe('conversation.item.done');
    await a.leave();

    const b = await open('sk-sb-one');
    const refused = await b.say(300, 'b1');
    expect(refused.type).toBe('error');
    expect(refused.error).toMatchObject({ type: 'rate_limit_exceeded', code: 429, event_id: 'b1' });
    expect(refused.error?.message).toMatch(/^this key sent more than 1000 characters/);
    // What still fits is forwarded.
    expect((await b.say(200, 'b2')).type).toBe('conversation.item.done');

    const other = await open('sk-sb-two');
    expect((await other.say(900, 'o1')).type).toBe('conversation.item.done');
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

    // The opted-out text was not counted for the key: its checked session still has the full allowance.
    const checked = await open('sk-sb-optout');
    expect((await checked.say(LIMIT, 'c1')).type).toBe('conversation.item.done');
  });
});
