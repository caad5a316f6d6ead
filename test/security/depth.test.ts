/**
 * Deeply nested JSON as a hostile tenant sends it, against a real gateway and fake providers
 * of three kinds: every such request is a 400 naming the depth limit, nothing reaches a
 * provider, no circuit opens, and another tenant keeps being served.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeAnswer } from '../../dataplane/src/fake-provider/index.ts';
import { DEFAULT_MAX_JSON_DEPTH } from '../../dataplane/src/formats/json-depth.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const ATTACKER = 'sk-depth-attacker';
const VICTIM = 'sk-depth-victim';
const DEEP = 10_000;
const CHAT = ['chat', 'streaming', 'tools'];

/** Raw JSON text: a JS value this deep could not even be serialised by JSON.stringify. */
const deepArray = (n: number): string => '['.repeat(n) + ']'.repeat(n);
const deepObject = (n: number): string => '{"a":'.repeat(n) + '1' + '}'.repeat(n);
/** A JSON Schema whose properties nest `n` objects deep (each level adds two to the depth). */
const deepSchema = (n: number): string =>
  '{"type":"object","properties":{"p":'.repeat(n) + '{"type":"string"}' + '}}'.repeat(n);

const user = '[{"role":"user","content":"hello"}]';
const chatBody = (model: string, extra: string, messages = user): string =>
  `{"model":"${model}","messages":${messages}${extra}}`;
/** A conversation replaying a tool call whose arguments (a JSON string) nest `n` deep. */
const toolHistory = (n: number): string =>
  JSON.stringify([
    { role: 'user', content: 'call the tool' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: deepArray(n) } }],
    },
    { role: 'tool', tool_call_id: 'c1', content: 'done' },
    { role: 'user', content: 'thanks' },
  ]);
const oneTool =
  ',"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"x":{"type":"string"}}}}}]';

interface Attack {
  name: string;
  path: string;
  body: string;
  param: string;
}

const CHAT_MODELS = ['gpt', 'claude', 'gemini'];

const attacks: Attack[] = [
  ...CHAT_MODELS.flatMap((m): Attack[] => [
    {
      name: `${m}: nested arrays in a content part`,
      path: '/v1/chat/completions',
      body: chatBody(
        m,
        '',
        `[{"role":"user","content":[{"type":"text","text":"hi","extra":${deepArray(DEEP)}}]}]`,
      ),
      param: 'body',
    },
    {
      name: `${m}: nested objects in metadata`,
      path: '/v1/chat/completions',
      body: chatBody(m, `,"metadata":{"x":${deepObject(DEEP)}}`),
      param: 'body',
    },
    {
      name: `${m}: tool parameters schema`,
      path: '/v1/chat/completions',
      body: chatBody(
        m,
        `,"tools":[{"type":"function","function":{"name":"f","parameters":${deepSchema(DEEP / 2)}}}]`,
      ),
      param: 'body',
    },
    {
      name: `${m}: response_format json_schema`,
      path: '/v1/chat/completions',
      body: chatBody(
        m,
        `,"response_format":{"type":"json_schema","json_schema":{"name":"s","schema":${deepSchema(DEEP / 2)}}}`,
      ),
      param: 'body',
    },
    {
      name: `${m}: tool-call arguments string`,
      path: '/v1/chat/completions',
      body: chatBody(m, oneTool, toolHistory(DEEP)),
      param: 'messages[1].tool_calls[0].function.arguments',
    },
  ]),
  {
    name: 'messages: metadata',
    path: '/v1/messages',
    body: `{"model":"claude","max_tokens":10,"messages":${user},"metadata":{"user_id":"u","x":${deepArray(DEEP)}}}`,
    param: 'body',
  },
  {
    name: 'messages: tool input_schema',
    path: '/v1/messages',
    body: `{"model":"gemini","max_tokens":10,"messages":${user},"tools":[{"name":"f","input_schema":${deepSchema(DEEP / 2)}}]}`,
    param: 'body',
  },
  {
    name: 'messages: tool_use input',
    path: '/v1/messages',
    body: `{"model":"gpt","max_tokens":10,"messages":[{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{"x":${deepObject(DEEP)}}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}]}`,
    param: 'body',
  },
  {
    name: 'completions: unknown field',
    path: '/v1/completions',
    body: `{"model":"legacy","prompt":"hi","extra":${deepArray(DEEP)}}`,
    param: 'body',
  },
  {
    name: 'embeddings: unknown field',
    path: '/v1/embeddings',
    body: `{"model":"embed","input":"hi","extra":${deepObject(DEEP)}}`,
    param: 'body',
  },
];

const DEPLOYMENTS = ['gpt', 'claude', 'gemini', 'legacy', 'embed'];

let stack: Stack;

beforeAll(async () => {
  stack = await startStack(
    ([url]) =>
      [
        deployment({ name: 'gpt', model: 'gpt', baseUrl: fakeBase(url!), capabilities: CHAT }),
        deployment({
          name: 'claude',
          model: 'claude',
          provider: 'anthropic',
          baseUrl: fakeBase(url!, 'anthropic'),
          capabilities: CHAT,
        }),
        deployment({
          name: 'gemini',
          model: 'gemini',
          provider: 'gemini',
          baseUrl: fakeBase(url!, 'gemini'),
          capabilities: CHAT,
        }),
        deployment({
          name: 'legacy',
          model: 'legacy',
          baseUrl: fakeBase(url!),
          capabilities: ['completions'],
        }),
        deployment({ name: 'embed', model: 'embed', baseUrl: fakeBase(url!), capabilities: ['embeddings'] }),
        // The attacker's tenant caches, so the cache key's canonical JSON sees the request too.
        tenant('attacker', ['*'], { cache: { enabled: true } }),
        tenant('victim'),
        apiKey('attacker', ATTACKER, 'attacker'),
        apiKey('victim', VICTIM, 'victim'),
      ].join(''),
    // One fault would be enough to open a circuit for a minute: any miscounted fault shows.
    { breaker: { failureThreshold: 1, baseOpenMs: 60_000, maxOpenMs: 60_000 } },
  );
});
afterAll(() => stack?.close());

async function send(path: string, body: string, key: string): Promise<{ status: number; json: unknown }> {
  const res = await fetch(`${stack.gateway.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body,
  });
  const text = await res.text();
  return { status: res.status, json: JSON.parse(text) as unknown };
}

async function upstreamFailures(): Promise<string[]> {
  const text = await (await fetch(`${stack.gateway.adminUrl}/metrics`)).text();
  return text.split('\n').filter((l) => l.startsWith('gantry_upstream_failures_total{'));
}

describe(`JSON nested ${DEEP} deep`, () => {
  it('is a 400 naming the limit on every route and in every place, and reaches no provider', async () => {
    expect(attacks.length).toBeGreaterThanOrEqual(20);
    stack.fakes[0]!.reset();
    for (const a of attacks) {
      const { status, json } = await send(a.path, a.body, ATTACKER);
      expect(status, `${a.name}: ${JSON.stringify(json)}`).toBe(400);
      expect(json, a.name).toMatchObject({
        error: {
          type: 'invalid_request_error',
          code: 400,
          param: a.param,
          message: `${a.param}: JSON nesting depth exceeds ${DEFAULT_MAX_JSON_DEPTH}`,
        },
      });
    }
    expect(stack.fakes[0]!.requests).toHaveLength(0);
  });

  it('leaves every circuit closed and another tenant served on every model', async () => {
    await Promise.all(attacks.map((a) => send(a.path, a.body, ATTACKER)));
    for (const name of DEPLOYMENTS) expect(stack.gateway.health.circuitState(name), name).toBe('closed');
    expect(await upstreamFailures()).toEqual([]);

    const victim = new OpenAI({ baseURL: stack.baseURL, apiKey: VICTIM, maxRetries: 0 });
    for (const model of CHAT_MODELS) {
      const answer = await victim.chat.completions.create({
        model,
        messages: [{ role: 'user', content: 'still there?' }],
      });
      expect(answer.choices[0]?.message.content, model).toBe(fakeAnswer('still there?'));
    }
    const embedded = await victim.embeddings.create({ model: 'embed', input: 'still there?' });
    expect(embedded.data).toHaveLength(1);
  });
});

describe('JSON at the limit', () => {
  it('a tool schema nested to the limit is served', async () => {
    // body > tools > [0] > function > parameters: 5 levels before the schema's own.
    const levels = Math.floor((DEFAULT_MAX_JSON_DEPTH - 5) / 2);
    for (const model of CHAT_MODELS) {
      const body = chatBody(
        model,
        `,"tools":[{"type":"function","function":{"name":"f","parameters":${deepSchema(levels)}}}]`,
      );
      const { status, json } = await send('/v1/chat/completions', body, VICTIM);
      expect(status, `${model}: ${JSON.stringify(json)}`).toBe(200);
    }
  });
});
