/**
 * Context recovery between the end users of one API key. An application commonly serves many
 * people with one key, one system prompt and the same opening message ("Hi"); the session
 * derived from those (SPEC.md, CCR) is then the same for all of them, so content filed from
 * one person's conversation (files read, tool output) could be re-injected into another's.
 * A request that names its end user (`user` and `safety_identifier` together, Anthropic
 * `metadata.user_id`) gets a derived session of that user's own.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../dataplane/src/formats/openai/types.ts';
import { agentTrace, longChat } from '../../dataplane/src/pipeline/compression/fixtures.ts';
import { RECOVERED_HEADER } from '../../dataplane/src/pipeline/compression/state.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEY = 'sk-test-ccr-users';
let stack: Stack;
let client: OpenAI;

beforeAll(async () => {
  stack = await startStack(([url]) =>
    [
      deployment({
        name: 'big',
        model: 'big',
        baseUrl: fakeBase(url!),
        pricing: { inputPerMillionTokens: 5, outputPerMillionTokens: 15 },
        capabilities: ['chat', 'streaming', 'tools'],
      }),
      deployment({
        name: 'cheap',
        model: 'cheap',
        baseUrl: fakeBase(url!),
        pricing: { inputPerMillionTokens: 0.1, outputPerMillionTokens: 0.2 },
        capabilities: ['chat', 'streaming', 'tools'],
      }),
      tenant('acme', ['big', 'cheap']),
      apiKey('k', KEY, 'acme'),
    ].join(''),
  );
  client = new OpenAI({ baseURL: stack.baseURL, apiKey: KEY, maxRetries: 0 });
});
afterAll(() => stack.close());
beforeEach(() => stack.fakes[0]!.reset());

const alice = agentTrace(21, 16).request.messages;
/** A file Alice's agent read early on: filed by compression when her History is compressed. */
const aliceRead = alice.find((m) => m.role === 'tool' && String(m.content).startsWith('// src/'))!;
const alicePath = String(aliceRead.content).split('\n')[0]!.slice(3);

/** Another conversation that opens exactly like Alice's (same system prompt, same first message), then reads no files. */
function openingLikeAlice(seed: number, last: string): ChatMessage[] {
  const own = longChat(seed, 40).request.messages;
  return [alice[0]!, alice[1]!, ...own.slice(1, -1), { role: 'user', content: last }];
}

async function send(messages: ChatMessage[], user: string, safety_identifier?: string) {
  const { response } = await client.chat.completions
    .create({
      model: 'big',
      messages: messages as OpenAI.Chat.Completions.ChatCompletionMessageParam[],
      tools: agentTrace(1, 1).request.tools as OpenAI.Chat.Completions.ChatCompletionTool[],
      user,
      ...(safety_identifier === undefined ? {} : { safety_identifier }),
    })
    .withResponse();
  expect(
    response.headers.get('x-gantrystate-mode'),
    response.headers.get('x-gantrystate-fallback') ?? '',
  ).toBe('state');
  const sent = stack.fakes[0]!.requests.filter((r) => (r.body as { model?: string }).model === 'big').at(-1)!
    .body as { messages: ChatMessage[] };
  return sent.messages.find((m) => String(m.content ?? '').startsWith(RECOVERED_HEADER));
}

describe('context recovery and end users of one key', () => {
  it("never re-injects one end user's filed content into another's conversation", async () => {
    await send(alice, 'alice');
    const recovered = await send(openingLikeAlice(22, `Open ${alicePath} again and fix it.`), 'bob');
    expect(String(recovered?.content ?? '')).not.toContain(String(aliceRead.content));
  });

  it('keeps people apart when the app sends a fixed user and one safety_identifier per person', async () => {
    await send(alice, 'acme-web', 'alice');
    const recovered = await send(
      openingLikeAlice(24, `Open ${alicePath} again and fix it.`),
      'acme-web',
      'bob',
    );
    expect(String(recovered?.content ?? '')).not.toContain(String(aliceRead.content));
    const again = await send(
      openingLikeAlice(25, `Open ${alicePath} again and fix it.`),
      'acme-web',
      'alice',
    );
    expect(String(again?.content)).toContain(String(aliceRead.content));
  });

  it('refuses a safety_identifier that is not a string, naming it', async () => {
    for (const path of ['/chat/completions', '/responses']) {
      const body =
        path === '/responses'
          ? { model: 'big', input: 'Hi', safety_identifier: 42 }
          : { model: 'big', messages: [{ role: 'user', content: 'Hi' }], safety_identifier: 42 };
      const res = await fetch(`${stack.baseURL}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const err = (await res.json()) as { error: { message: string; type: string } };
      expect(res.status, path).toBe(400);
      expect(err.error.message, path).toContain('safety_identifier');
      expect(err.error.type).toBe('invalid_request_error');
    }
  });

  it('still recovers it for the same end user', async () => {
    await send(alice, 'carol');
    const recovered = await send(openingLikeAlice(23, `Open ${alicePath} again and fix it.`), 'carol');
    expect(String(recovered?.content)).toContain(String(aliceRead.content));
  });
});
