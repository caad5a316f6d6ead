/**
 * The Gemini Interactions API over raw HTTP, translated to chat and served by OpenAI,
 * Anthropic and Gemini upstreams alike: stored interactions, previous_interaction_id
 * chaining, function calls, streaming, the cost charged, and ownership by tenant and key.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeAnswer } from '../../dataplane/src/fake-provider/behaviour.ts';
import type { Interaction } from '../../dataplane/src/formats/interactions/types.ts';
import { rawStream } from '../harness/raw-stream.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';
import { usageRecord } from '../harness/usage-record.ts';

const KEY = 'sk-int';
const SAME_TENANT_KEY = 'sk-int-2';
const OTHER_TENANT_KEY = 'sk-int-other';
const BUDGET = { limitUsd: 5, period: 'monthly' as const };
const models = [
  { model: 'int-openai', provider: 'openai' },
  { model: 'int-anthropic', provider: 'anthropic' },
  { model: 'int-gemini', provider: 'gemini' },
];
let stack: Stack;
let chargedMicros = 0;

beforeAll(async () => {
  stack = await startStack(([url]) =>
    [
      ...models.map((m) =>
        deployment({
          name: m.model,
          model: m.model,
          provider: m.provider,
          baseUrl: fakeBase(url!, m.provider),
          capabilities: ['chat', 'streaming', 'tools', 'vision', 'json_mode'],
        }),
      ),
      tenant('acme'),
      tenant('other'),
      apiKey('int', KEY, 'acme', { budget: BUDGET }),
      apiKey('int-2', SAME_TENANT_KEY, 'acme'),
      apiKey('int-other', OTHER_TENANT_KEY, 'other'),
    ].join(''),
  );
});
afterAll(() => stack.close());

type Answer = Interaction & { error?: { message: string; param?: string; type: string } };

async function call(method: string, path: string, body?: unknown, key = KEY) {
  const res = await fetch(`${stack.baseURL}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body !== undefined && { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (key === KEY && res.status === 200)
    chargedMicros += Math.round(Number(res.headers.get('x-gantry-cost') ?? 0) * 1e6);
  return { res, json: (await res.json()) as Answer };
}

const weather = {
  type: 'function',
  name: 'get_weather',
  description: 'Weather of a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

describe.each(models)('interactions on $provider', ({ model }) => {
  it('answers, stores and chains on previous_interaction_id, charging the tokens', async () => {
    const first = await call('POST', '/interactions', {
      model,
      input: 'My name is Ada',
      system_instruction: 'Be brief',
    });
    expect(first.res.status).toBe(200);
    expect(first.json).toMatchObject({
      object: 'interaction',
      model,
      role: 'model',
      status: 'completed',
      outputs: [{ type: 'text', text: fakeAnswer('My name is Ada') }],
    });
    expect(first.json.id).toMatch(/^int_[0-9a-f]{32}$/);
    const u = first.json.usage!;
    expect(u.total_tokens).toBe(u.total_input_tokens + u.total_output_tokens);
    const cost = Number(first.res.headers.get('x-gantry-cost'));
    expect(cost).toBeCloseTo((u.total_input_tokens * 1 + u.total_output_tokens * 2) / 1e6, 9);
    const record = await usageRecord(stack, 'acme', first.res.headers.get('x-gantry-request-id'));
    expect(record).toMatchObject({ endpoint: 'interactions', costUsd: cost });

    const second = await call('POST', '/interactions', {
      model,
      input: 'What is my name?',
      previous_interaction_id: first.json.id,
    });
    expect(second.json.previous_interaction_id).toBe(first.json.id);
    const sent = JSON.stringify(stack.fakes[0]!.requests.at(-1)!.body);
    expect(sent).toContain('My name is Ada');
    expect(sent).toContain(fakeAnswer('My name is Ada'));
    expect(second.json.usage!.total_input_tokens).toBeGreaterThan(u.total_input_tokens);

    const got = await call('GET', `/interactions/${first.json.id}`);
    expect(got.json).toEqual(first.json);
  });

  it('round-trips a function call as requires_action then function_result', async () => {
    const first = await call('POST', '/interactions', {
      model,
      input: 'Weather in Paris?',
      tools: [weather],
    });
    expect(first.json.status).toBe('requires_action');
    const fc = first.json.outputs.find((o) => o.type === 'function_call');
    expect(fc).toMatchObject({ type: 'function_call', name: 'get_weather', arguments: { city: 'fake' } });
    if (fc?.type !== 'function_call') throw new Error('no function call');
    const second = await call('POST', '/interactions', {
      model,
      tools: [weather],
      previous_interaction_id: first.json.id,
      input: [{ type: 'function_result', call_id: fc.id, name: 'get_weather', result: { temp: 21 } }],
    });
    expect(second.json.status).toBe('completed');
    expect(second.json.outputs).toEqual([{ type: 'text', text: fakeAnswer('Weather in Paris?') }]);
  });

  it('streams interaction.start, content events and interaction.complete, stored for chaining', async () => {
    const s = await rawStream(
      `${stack.baseURL}/interactions`,
      { authorization: `Bearer ${KEY}` },
      {
        model,
        input: 'Stream please',
        stream: true,
      },
    );
    expect(s.status).toBe(200);
    const types = s.events.map((e) => e.event_type);
    expect(types[0]).toBe('interaction.start');
    expect(types.at(-1)).toBe('interaction.complete');
    expect(types).toContain('content.delta');
    const text = s.events
      .filter((e) => e.event_type === 'content.delta')
      .map((e) => (e.delta as { text: string }).text)
      .join('');
    expect(text).toBe(fakeAnswer('Stream please'));
    const done = s.events.at(-1)!.interaction as Interaction;
    expect(done.outputs).toEqual([{ type: 'text', text }]);
    const cost = Number(s.trailers['x-gantry-cost']);
    expect(cost).toBeGreaterThan(0);
    chargedMicros += Math.round(cost * 1e6);
    expect((await call('GET', `/interactions/${done.id}`)).json.id).toBe(done.id);
  });
});

describe('interactions ownership and refusals', () => {
  it('another key or tenant gets the 404 of an unknown id, for GET, DELETE and chaining', async () => {
    const mine = await call('POST', '/interactions', { model: 'int-openai', input: 'secret plans' });
    const id = mine.json.id;
    for (const key of [SAME_TENANT_KEY, OTHER_TENANT_KEY]) {
      expect((await call('GET', `/interactions/${id}`, undefined, key)).res.status).toBe(404);
      expect((await call('DELETE', `/interactions/${id}`, undefined, key)).res.status).toBe(404);
      const chained = await call(
        'POST',
        '/interactions',
        { model: 'int-openai', input: 'x', previous_interaction_id: id },
        key,
      );
      expect(chained.res.status).toBe(404);
      expect(chained.json.error?.param).toBe('previous_interaction_id');
    }
    expect((await call('DELETE', `/interactions/${id}`)).json).toEqual({});
    expect((await call('GET', `/interactions/${id}`)).res.status).toBe(404);
  });

  it('does not keep store:false interactions', async () => {
    const r = await call('POST', '/interactions', { model: 'int-openai', input: 'forget me', store: false });
    expect((await call('GET', `/interactions/${r.json.id}`)).res.status).toBe(404);
  });

  it('refuses fields it cannot honour by name, and hostile shapes', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ model: 'int-openai', input: 'x', background: true }, 'background'],
      [{ model: 'int-openai', input: 'x', agent: 'deep-research' }, 'agent'],
      [{ model: 'int-openai', input: 'x', tools: [{ type: 'google_search' }] }, 'tools[0].type'],
      [{ model: 'int-openai', input: 'x', safety_settings: [] }, 'safety_settings'],
      [
        { model: 'int-openai', input: 'x', generation_config: { candidate_count: 2 } },
        'generation_config.candidate_count',
      ],
      [{ model: 'int-openai', input: [{ type: 'audio', data: 'AA' }] }, 'input.content[0].type'],
      [
        { model: 'int-openai', input: [{ role: 'model', content: [{ type: 'image', data: 'AA' }] }] },
        'input[0].content[0]',
      ],
    ];
    for (const [body, param] of cases) {
      const r = await call('POST', '/interactions', body);
      expect(r.res.status, param).toBe(400);
      expect(r.json.error?.param).toBe(param);
    }
    const huge = await call('POST', '/interactions', {
      model: 'int-openai',
      input: Array.from({ length: 5000 }, () => ({ type: 'text', text: 'a' })),
    });
    expect(huge.res.status).toBe(400);
    let nested: unknown = 'x';
    for (let i = 0; i < 200; i++) nested = { type: 'text', text: nested };
    const deep = await call('POST', '/interactions', { model: 'int-openai', input: [nested] });
    expect(deep.res.status).toBe(400);
    expect((await call('POST', '/interactions', { model: 'nope', input: 'x' })).res.status).toBe(404);
  });

  it("the key's budget spend is the sum of the charged costs", async () => {
    const state = await stack.gateway.stores.budgets.state({ tenant: 'acme', keyId: 'default/int' }, BUDGET);
    expect(chargedMicros).toBeGreaterThan(0);
    expect(Math.round(state.spentUsd * 1e6)).toBe(chargedMicros);
  });
});
