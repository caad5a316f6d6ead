/**
 * Deeply nested JSON as a hostile tenant sends it, against a real gateway and fake providers
 * of three kinds: every such request is a 400 naming the depth limit, nothing reaches a
 * provider, no circuit opens, and another tenant keeps being served.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeAnswer } from '../../dataplane/src/fake-provider/index.ts';
import { DEFAULT_MAX_JSON_DEPTH, MAX_JSON_DEPTH_CEILING } from '../../dataplane/src/formats/json-depth.ts';
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

/** Every place and route, nested `deep` levels (counted inside the place, not from the body). */
const attacksAt = (deep: number): Attack[] => [
  ...CHAT_MODELS.flatMap((m): Attack[] => [
    {
      name: `${m}: nested arrays in a content part`,
      path: '/v1/chat/completions',
      body: chatBody(
        m,
        '',
        `[{"role":"user","content":[{"type":"text","text":"hi","extra":${deepArray(deep)}}]}]`,
      ),
      param: 'body',
    },
    {
      name: `${m}: nested objects in metadata`,
      path: '/v1/chat/completions',
      body: chatBody(m, `,"metadata":{"x":${deepObject(deep)}}`),
      param: 'body',
    },
    {
      name: `${m}: tool parameters schema`,
      path: '/v1/chat/completions',
      body: chatBody(
        m,
        `,"tools":[{"type":"function","function":{"name":"f","parameters":${deepSchema(Math.floor(deep / 2))}}}]`,
      ),
      param: 'body',
    },
    {
      name: `${m}: response_format json_schema`,
      path: '/v1/chat/completions',
      body: chatBody(
        m,
        `,"response_format":{"type":"json_schema","json_schema":{"name":"s","schema":${deepSchema(Math.floor(deep / 2))}}}`,
      ),
      param: 'body',
    },
    {
      name: `${m}: streamed, nested objects in metadata`,
      path: '/v1/chat/completions',
      body: chatBody(m, `,"stream":true,"metadata":{"x":${deepObject(deep)}}`),
      param: 'body',
    },
    {
      name: `${m}: tool-call arguments string`,
      path: '/v1/chat/completions',
      body: chatBody(m, oneTool, toolHistory(deep)),
      param: 'messages[1].tool_calls[0].function.arguments',
    },
  ]),
  {
    name: 'messages: metadata',
    path: '/v1/messages',
    body: `{"model":"claude","max_tokens":10,"messages":${user},"metadata":{"user_id":"u","x":${deepArray(deep)}}}`,
    param: 'body',
  },
  {
    name: 'messages: tool input_schema',
    path: '/v1/messages',
    body: `{"model":"gemini","max_tokens":10,"messages":${user},"tools":[{"name":"f","input_schema":${deepSchema(Math.floor(deep / 2))}}]}`,
    param: 'body',
  },
  {
    name: 'messages: tool_use input',
    path: '/v1/messages',
    body: `{"model":"gpt","max_tokens":10,"messages":[{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{"x":${deepObject(deep)}}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}]}`,
    param: 'body',
  },
  {
    name: 'completions: unknown field',
    path: '/v1/completions',
    body: `{"model":"legacy","prompt":"hi","extra":${deepArray(deep)}}`,
    param: 'body',
  },
  {
    name: 'embeddings: unknown field',
    path: '/v1/embeddings',
    body: `{"model":"embed","input":"hi","extra":${deepObject(deep)}}`,
    param: 'body',
  },
];

const attacks = attacksAt(DEEP);

const DEPLOYMENTS = ['gpt', 'claude', 'gemini', 'legacy', 'embed'];

let stack: Stack;
/** The same gateway with the limit raised to its ceiling: the walks behind the edge must hold. */
let raised: Stack;

const manifests = (url: string): string =>
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
  ].join('');
// One fault is enough to open a circuit for a minute: any miscounted fault shows.
const breaker = { failureThreshold: 1, baseOpenMs: 60_000, maxOpenMs: 60_000 };

beforeAll(async () => {
  [stack, raised] = await Promise.all([
    startStack(([url]) => manifests(url!), { breaker }),
    startStack(([url]) => manifests(url!), { breaker, maxJsonDepth: MAX_JSON_DEPTH_CEILING }),
  ]);
});
afterAll(() => Promise.all([stack?.close(), raised?.close()]));

async function send(
  path: string,
  body: string,
  key: string,
  on: Stack = stack,
): Promise<{ status: number; json: unknown }> {
  const res = await fetch(`${on.gateway.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body,
  });
  const text = await res.text();
  const sse = res.headers.get('content-type')?.startsWith('text/event-stream') === true;
  return { status: res.status, json: sse ? text.slice(0, 200) : (JSON.parse(text) as unknown) };
}

async function upstreamFailures(on: Stack = stack): Promise<string[]> {
  const text = await (await fetch(`${on.gateway.adminUrl}/metrics`)).text();
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

  it('leaves every circuit closed and another tenant served on every model, during and after', async () => {
    const victim = new OpenAI({ baseURL: stack.baseURL, apiKey: VICTIM, maxRetries: 0 });
    const ask = async (model: string): Promise<string | null | undefined> =>
      (await victim.chat.completions.create({ model, messages: [{ role: 'user', content: 'still there?' }] }))
        .choices[0]?.message.content;
    // The attacks and the other tenant's traffic interleave, as they would in production.
    const [answers] = await Promise.all([
      Promise.all(attacks.map((_, i) => ask(CHAT_MODELS[i % CHAT_MODELS.length]!))),
      Promise.all(attacks.map((a) => send(a.path, a.body, ATTACKER))),
    ]);
    expect(answers).toEqual(attacks.map(() => fakeAnswer('still there?')));
    for (const name of DEPLOYMENTS) expect(stack.gateway.health.circuitState(name), name).toBe('closed');
    expect(await upstreamFailures()).toEqual([]);

    for (const model of CHAT_MODELS) expect(await ask(model), model).toBe(fakeAnswer('still there?'));
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

describe(`with the limit raised to its ceiling (${MAX_JSON_DEPTH_CEILING})`, () => {
  it('JSON nested just inside it passes every walk and is served: no circuit opened', async () => {
    // Places sit up to 7 levels below the body root.
    const inside = attacksAt(MAX_JSON_DEPTH_CEILING - 10);
    for (const a of inside) {
      const { status, json } = await send(a.path, a.body, ATTACKER, raised);
      expect(status, `${a.name}: ${JSON.stringify(json)}`).toBe(200);
    }
    for (const name of DEPLOYMENTS) expect(raised.gateway.health.circuitState(name), name).toBe('closed');
    expect(await upstreamFailures(raised)).toEqual([]);
  });

  it('JSON nested beyond it is still refused at the edge', async () => {
    for (const a of attacks) {
      const { status, json } = await send(a.path, a.body, ATTACKER, raised);
      expect(status, a.name).toBe(400);
      expect(json, a.name).toMatchObject({
        error: { message: `${a.param}: JSON nesting depth exceeds ${MAX_JSON_DEPTH_CEILING}` },
      });
    }
  });
});
