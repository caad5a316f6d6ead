/**
 * State compression end to end: the official SDKs against a real Gantry and the fake
 * provider, which answers the extraction prompt with a deterministic state and checks the
 * tool-call pairing of every request it receives.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../dataplane/src/formats/openai/types.ts';
import { agentTrace, longChat } from '../../dataplane/src/pipeline/compression/fixtures.ts';
import { RECOVERED_HEADER, STATE_HEADER } from '../../dataplane/src/pipeline/compression/state.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

/** ~9k tokens of ordinary prose (a single word repeated reads as a repetition attack to the injection guard). */
const LONG_PROSE = 'The quarterly report shows revenue growth across all regions, led by Europe. '.repeat(
  650,
);

const KEY = 'sk-test-compress';
const KEY2 = 'sk-test-compress-2';
let stack: Stack;
const fake = () => stack.fakes[0]!;
const H = 'x-gantrystate-';

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
      deployment({
        name: 'claude',
        model: 'claude',
        provider: 'anthropic',
        baseUrl: fakeBase(url!, 'anthropic'),
        pricing: { inputPerMillionTokens: 3, outputPerMillionTokens: 15 },
        capabilities: ['chat', 'streaming', 'tools'],
      }),
      tenant('acme', ['big', 'cheap', 'claude']),
      tenant('nomodel', ['big'], { compression: { enabled: true, extractionModel: 'not-deployed' } }),
      tenant('off', ['big', 'cheap'], { compression: { enabled: false } }),
      apiKey('k1', KEY, 'acme'),
      apiKey('k2', KEY2, 'acme'),
      apiKey('k-nomodel', `${KEY}-nomodel`, 'nomodel'),
      apiKey('k-off', `${KEY}-off`, 'off'),
    ].join(''),
  );
});
afterAll(() => stack.close());
beforeEach(() => fake().reset());

const openai = (key = KEY) => new OpenAI({ baseURL: stack.baseURL, apiKey: key, maxRetries: 0 });

type Params = OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming;

async function chat(
  messages: ChatMessage[],
  opts: { key?: string; headers?: Record<string, string>; tools?: boolean } = {},
) {
  const body = {
    model: 'big',
    messages,
    ...(opts.tools !== false && { tools: agentTrace(1, 1).request.tools }),
  } as unknown as Params;
  return openai(opts.key)
    .chat.completions.create(body, { headers: opts.headers ?? {} })
    .withResponse();
}

/** The upstream requests the fake received for a model (the answer's, or the extraction's). */
const upstream = (model: string) =>
  fake().requests.filter((r) => (r.body as { model?: string } | undefined)?.model === model);
const upstreamMessages = (model = 'big') =>
  (upstream(model).at(-1)?.body as { messages: ChatMessage[] } | undefined)?.messages ?? [];

describe('compression on /v1/chat/completions', () => {
  it('passes a short request through with mode none and below_threshold(tokens/threshold)', async () => {
    const { response } = await chat([{ role: 'user', content: 'Hello there' }], { tools: false });
    const h = response.headers;
    expect(h.get(`${H}mode`)).toBe('none');
    const original = Number(h.get(`${H}original-tokens`));
    expect(original).toBeGreaterThan(0);
    expect(h.get(`${H}tokens`)).toBe(String(original));
    expect(h.get(`${H}ratio`)).toBe('0.0000');
    expect(h.get(`${H}fallback`)).toBe(`below_threshold(${original}/8000)`);
    expect(h.get(`${H}extraction-prompt-tokens`)).toBe('0');
    expect(upstream('cheap')).toHaveLength(0);
  });

  it('replaces History by one state message, keeps Recent and Last verbatim, with tool calls paired', async () => {
    const g = agentTrace(11, 16);
    const { response, data } = await chat(g.request.messages);
    expect(data.choices[0]).toBeDefined();
    const h = response.headers;
    expect(h.get(`${H}mode`)).toBe('state');
    expect(h.get(`${H}fallback`)).toBeNull();
    const original = Number(h.get(`${H}original-tokens`));
    const tokens = Number(h.get(`${H}tokens`));
    expect(original).toBeGreaterThan(8000);
    expect(tokens).toBeLessThan(original * 0.4);
    expect(Number(h.get(`${H}ratio`))).toBeCloseTo(1 - tokens / original, 4);
    expect(Number(h.get(`${H}extraction-prompt-tokens`))).toBeGreaterThan(0);
    expect(Number(h.get(`${H}extraction-completion-tokens`))).toBeGreaterThan(0);
    expect(Number(h.get(`${H}latency-ms`))).toBeGreaterThanOrEqual(0);
    expect(decodeURIComponent(h.get(`${H}intent`) ?? '')).toContain('Ticket GA-111');
    const constraints = JSON.parse(decodeURIComponent(h.get(`${H}constraints`) ?? '')) as {
      identifiers: Record<string, string>;
    };
    // Paths the History read are identifiers of the state even though the fake model named none.
    expect(Object.values(constraints.identifiers)).toContain(g.facts.paths[0]);

    // The extraction went to the tenant's cheapest model, through the router.
    expect(upstream('cheap')).toHaveLength(1);
    const sent = upstreamMessages();
    expect(sent[0]).toEqual(g.request.messages[0]); // System unchanged
    expect(sent[1]?.role).toBe('user');
    expect(String(sent[1]?.content)).toContain(STATE_HEADER);
    expect(sent.at(-1)).toEqual(g.request.messages.at(-1)); // Last verbatim
    // Recent: the tail of the original, verbatim, starting at an assistant step.
    const tail = sent.slice(2).filter((m) => !String(m.content ?? '').startsWith(RECOVERED_HEADER));
    expect(g.request.messages.slice(-tail.length)).toEqual(tail);
    expect(tail[0]?.role).toBe('assistant');
  });

  it('charges the extraction as spend under the provider label "compression"', async () => {
    const g = agentTrace(12, 16);
    const { response } = await chat(g.request.messages);
    const id = response.headers.get('x-gantry-request-id')!;
    const day = new Date().toISOString().slice(0, 10);
    const logs = await stack.gateway.stores.usage.logs({ tenant: 'acme', from: day, to: day, limit: 50 });
    const main = logs.find((r) => r.id === id);
    const side = logs.find((r) => r.id === `${id}:compression`);
    expect(side?.provider).toBe('compression');
    expect(side?.model).toBe('cheap');
    expect(side?.costUsd).toBeGreaterThan(0);
    expect(main?.compression?.originalTokens).toBe(Number(response.headers.get(`${H}original-tokens`)));
    expect(main?.compression?.tokens).toBe(Number(response.headers.get(`${H}tokens`)));
    expect(main?.compression?.savedUsd).toBeGreaterThan(0);
    const metrics = await stack.gateway.metrics.registry.metrics();
    expect(metrics).toMatch(
      /gantry_spend_usd_total\{tenant="acme",model="cheap",provider="compression"\} [0-9.e-]+/,
    );
    expect(metrics).toMatch(
      /gantry_compression_saved_tokens_total\{tenant="acme",key="default\/k1",model="big"\} \d+/,
    );
  });

  it('x-gantry-state: false skips it; x-gantry-route: false keeps it', async () => {
    const g = agentTrace(13, 16);
    const off = await chat(g.request.messages, { headers: { 'x-gantry-state': 'false' } });
    expect(off.response.headers.get(`${H}mode`)).toBeNull();
    expect(upstreamMessages()).toHaveLength(g.request.messages.length);
    const kept = await chat(g.request.messages, { headers: { 'x-gantry-route': 'false' } });
    expect(kept.response.headers.get(`${H}mode`)).toBe('state');
  });

  it('a tenant that turns it off gets no compression and no headers', async () => {
    const g = agentTrace(13, 16);
    const { response } = await chat(g.request.messages, { key: `${KEY}-off` });
    expect(response.headers.get(`${H}mode`)).toBeNull();
    expect(upstreamMessages()).toHaveLength(g.request.messages.length);
  });

  it('no_model when the configured extraction model is not deployed', async () => {
    const g = agentTrace(14, 16);
    const { response } = await chat(g.request.messages, { key: `${KEY}-nomodel` });
    expect(response.headers.get(`${H}mode`)).toBe('none');
    expect(response.headers.get(`${H}fallback`)).toBe('no_model');
    expect(upstreamMessages()).toHaveLength(g.request.messages.length);
  });

  it('extraction_failed when the extraction model errors, and the request still succeeds', async () => {
    fake().setFaults([{ match: { model: 'cheap' }, fault: { type: 'status', status: 400, code: 'bad' } }]);
    const g = agentTrace(15, 16);
    const { response, data } = await chat(g.request.messages);
    expect(data.choices).toHaveLength(1);
    expect(response.headers.get(`${H}fallback`)).toBe('extraction_failed');
    expect(response.headers.get(`${H}mode`)).toBe('none');
    expect(upstreamMessages()).toEqual(g.request.messages);
  });

  it('extraction_failed when the extraction answer is not a valid state', async () => {
    const g = agentTrace(16, 16);
    g.request.messages[1] = {
      role: 'user',
      content: `${String(g.request.messages[1]!.content)} fake:invalid-state`,
    };
    const { response } = await chat(g.request.messages);
    expect(response.headers.get(`${H}fallback`)).toBe('extraction_failed');
    expect(Number(response.headers.get(`${H}extraction-completion-tokens`))).toBeGreaterThan(0);
    expect(upstreamMessages()).toEqual(g.request.messages);
  });

  it('insufficient_headroom when Recent and Last are nearly everything', async () => {
    const messages: ChatMessage[] = [];
    for (let i = 0; i < 6; i++)
      messages.push({ role: 'user', content: `hi ${i}` }, { role: 'assistant', content: 'hello' });
    messages.push({ role: 'user', content: LONG_PROSE });
    const { response } = await chat(messages, { tools: false });
    expect(response.headers.get(`${H}fallback`)).toBe('insufficient_headroom');
  });

  it('no_history when there is nothing before the last message', async () => {
    const { response } = await chat([{ role: 'user', content: LONG_PROSE }], { tools: false });
    expect(response.headers.get(`${H}fallback`)).toBe('no_history');
  });

  it('streams carry the same headers', async () => {
    const g = longChat(3, 40);
    const stream = await openai()
      .chat.completions.create({ model: 'big', messages: g.request.messages as never, stream: true })
      .withResponse();
    expect(stream.response.headers.get(`${H}mode`)).toBe('state');
    for await (const _ of stream.data) void _;
  });
});

describe('context recovery', () => {
  it('re-injects a file read in History, byte-exact, when Last refers to it again', async () => {
    const g = agentTrace(21, 16);
    const read = g.request.messages.find(
      (m) => m.role === 'tool' && String(m.content).startsWith('// src/'),
    )!;
    const path = String(read.content).split('\n')[0]!.slice(3);
    const messages = [...g.request.messages];
    messages[messages.length - 1] = { role: 'user', content: `Open ${path} again and fix it.` };
    const { response } = await chat(messages, { headers: { 'x-gantry-session': 'sess-1' } });
    expect(response.headers.get(`${H}mode`)).toBe('state');
    const recovered = upstreamMessages().find((m) => String(m.content ?? '').startsWith(RECOVERED_HEADER));
    expect(String(recovered?.content)).toContain(String(read.content));
  });
});

/** The fixture's OpenAI-shaped conversation as Anthropic Messages (tool results join one user turn). */
function toAnthropic(messages: ChatMessage[]): { system: string; messages: Anthropic.MessageParam[] } {
  let system = '';
  const out: Anthropic.MessageParam[] = [];
  const push = (role: 'user' | 'assistant', blocks: Anthropic.ContentBlockParam[]) => {
    const prev = out.at(-1);
    if (prev && prev.role === role && Array.isArray(prev.content)) prev.content.push(...blocks);
    else out.push({ role, content: blocks });
  };
  for (const m of messages) {
    if (m.role === 'system') system += String(m.content);
    else if (m.role === 'user') push('user', [{ type: 'text', text: String(m.content) }]);
    else if (m.role === 'tool')
      push('user', [{ type: 'tool_result', tool_use_id: m.tool_call_id!, content: String(m.content) }]);
    else {
      const blocks: Anthropic.ContentBlockParam[] = [];
      if (typeof m.content === 'string' && m.content) blocks.push({ type: 'text', text: m.content });
      for (const c of m.tool_calls ?? [])
        blocks.push({
          type: 'tool_use',
          id: c.id,
          name: c.function.name,
          input: JSON.parse(c.function.arguments),
        });
      push('assistant', blocks);
    }
  }
  return { system, messages: out };
}

describe('compression on /v1/messages', () => {
  it('compresses an Anthropic agent trace with tool_use/tool_result sequences kept together', async () => {
    const g = agentTrace(31, 16);
    const { system, messages } = toAnthropic(g.request.messages);
    const anthropic = new Anthropic({ baseURL: stack.gateway.url, apiKey: KEY, maxRetries: 0 });
    const { response, data } = await anthropic.messages
      .create({
        model: 'claude',
        max_tokens: 256,
        system,
        messages,
        tools: [
          { name: 'read_file', input_schema: { type: 'object', properties: { path: { type: 'string' } } } },
        ],
      })
      .withResponse();
    expect(data.content.length).toBeGreaterThan(0);
    expect(response.headers.get(`${H}mode`)).toBe('state');
    // The Anthropic fake checks every tool_use is answered in the next turn; it answered 200.
    const sent = fake()
      .requests.filter((r) => r.path.endsWith('/messages'))
      .at(-1)?.body as {
      messages: { role: string; content: unknown }[];
    };
    expect(sent.messages[0]?.role).toBe('user');
    expect(JSON.stringify(sent.messages[0]?.content)).toContain('Conversation state');
  });
});
