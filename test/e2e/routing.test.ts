/** Difficulty routing end to end: the upstream receives the routed model and its effort. */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEY = 'sk-test-routing';
const NARROW_KEY = 'sk-test-routing-narrow';
let stack: Stack;
let client: OpenAI;
const fake = () => stack.fakes[0]!;

const levels = (complexModel: string) => ({
  enabled: true,
  levels: {
    trivial: { model: 'small', reasoningEffort: 'low' },
    standard: { model: 'small', reasoningEffort: 'medium' },
    complex: { model: complexModel, reasoningEffort: 'high' },
  },
});

beforeAll(async () => {
  stack = await startStack(([url]) =>
    [
      deployment({
        name: 'small',
        model: 'small',
        baseUrl: fakeBase(url!),
        upstreamModel: 'small-up',
        capabilities: ['chat', 'streaming'],
      }),
      deployment({
        name: 'o-reasoner',
        model: 'o-reasoner',
        baseUrl: fakeBase(url!),
        capabilities: ['chat', 'streaming', 'reasoning'],
      }),
      deployment({
        name: 'claude-reasoner',
        model: 'claude-reasoner',
        provider: 'anthropic',
        baseUrl: fakeBase(url!),
        capabilities: ['chat', 'streaming', 'reasoning'],
      }),
      deployment({
        name: 'gemini-reasoner',
        model: 'gemini-reasoner',
        provider: 'gemini',
        baseUrl: fakeBase(url!, 'gemini'),
        capabilities: ['chat', 'streaming', 'reasoning'],
      }),
      tenant('openai-t', ['*'], { routing: levels('o-reasoner') }),
      tenant('claude-t', ['*'], { routing: levels('claude-reasoner') }),
      tenant('gemini-t', ['*'], { routing: levels('gemini-reasoner') }),
      tenant('off-t', ['*'], { routing: { ...levels('o-reasoner'), enabled: false } }),
      apiKey('k-openai', KEY, 'openai-t'),
      apiKey('k-claude', `${KEY}-claude`, 'claude-t'),
      apiKey('k-gemini', `${KEY}-gemini`, 'gemini-t'),
      apiKey('k-off', `${KEY}-off`, 'off-t'),
      apiKey('k-narrow', NARROW_KEY, 'openai-t', { models: ['small'] }),
    ].join(''),
  );
  client = new OpenAI({ baseURL: stack.baseURL, apiKey: KEY, maxRetries: 0 });
});
afterAll(() => stack.close());
beforeEach(() => fake().reset());

const HARD =
  'Design a distributed rate limiter for a multi-region API gateway. Compare token bucket, sliding window and GCRA, ' +
  'analyse consistency trade-offs under network partitions, and prove that your design never admits more than the limit. ' +
  'Then give a step-by-step migration plan from the current single-region Redis setup.';

const ask = (key: string, content: string, headers: Record<string, string> = {}) =>
  new OpenAI({ baseURL: stack.baseURL, apiKey: key, maxRetries: 0 }).chat.completions
    .create({ model: 'small', messages: [{ role: 'user', content }] }, { headers })
    .withResponse();

describe('difficulty routing', () => {
  it('keeps a trivial prompt on the small model, without effort for a model that does not reason', async () => {
    const { response } = await ask(KEY, 'hi!');
    expect(response.headers.get('x-gantryroute-level')).toBe('trivial');
    expect(response.headers.get('x-gantryroute-model')).toBe('small');
    expect(response.headers.get('x-gantryroute-effort')).toBeNull();
    const body = fake().requests.at(-1)?.body as Record<string, unknown>;
    expect(body.model).toBe('small-up');
    expect(body.reasoning_effort).toBeUndefined();
  });

  it('routes a complex prompt to the reasoning model with OpenAI reasoning_effort', async () => {
    const { data, response } = await ask(KEY, HARD);
    expect(response.headers.get('x-gantryroute-level')).toBe('complex');
    expect(response.headers.get('x-gantryroute-model')).toBe('o-reasoner');
    expect(response.headers.get('x-gantryroute-effort')).toBe('high');
    expect(data.model).toBe('o-reasoner');
    const body = fake().requests.at(-1)?.body as Record<string, unknown>;
    expect(body.model).toBe('o-reasoner');
    expect(body.reasoning_effort).toBe('high');
  });

  it('injects an Anthropic thinking budget', async () => {
    const { response } = await ask(`${KEY}-claude`, HARD);
    expect(response.headers.get('x-gantryroute-model')).toBe('claude-reasoner');
    const req = fake().requests.at(-1)!;
    expect(req.path).toContain('/messages');
    const body = req.body as { thinking?: { type: string; budget_tokens: number }; max_tokens: number };
    expect(body.thinking?.type).toBe('enabled');
    expect(body.thinking?.budget_tokens).toBeGreaterThan(0);
    expect(body.max_tokens).toBeGreaterThan(body.thinking!.budget_tokens);
  });

  it('injects a Gemini thinking config', async () => {
    const { response } = await ask(`${KEY}-gemini`, HARD);
    expect(response.headers.get('x-gantryroute-model')).toBe('gemini-reasoner');
    const req = fake().requests.at(-1)!;
    expect(req.path).toContain(':generateContent');
    const body = req.body as { generationConfig?: { thinkingConfig?: { thinkingBudget: number } } };
    expect(body.generationConfig?.thinkingConfig?.thinkingBudget).toBeGreaterThan(0);
  });

  it('honours x-gantry-route: false', async () => {
    const { response } = await ask(KEY, HARD, { 'x-gantry-route': 'false' });
    expect(response.headers.get('x-gantryroute-level')).toBeNull();
    expect((fake().requests.at(-1)?.body as Record<string, unknown>).model).toBe('small-up');
  });

  it('does nothing for a tenant with routing off', async () => {
    const { response } = await ask(`${KEY}-off`, HARD);
    expect(response.headers.get('x-gantryroute-level')).toBeNull();
    expect((fake().requests.at(-1)?.body as Record<string, unknown>).model).toBe('small-up');
  });

  it('never routes a key to a model it may not use', async () => {
    const { response } = await ask(NARROW_KEY, HARD);
    expect(response.headers.get('x-gantryroute-level')).toBe('complex');
    expect(response.headers.get('x-gantryroute-model')).toBe('small');
    expect((fake().requests.at(-1)?.body as Record<string, unknown>).model).toBe('small-up');
  });

  it('routes streaming requests too', async () => {
    const stream = await client.chat.completions.create({
      model: 'small',
      stream: true,
      messages: [{ role: 'user', content: HARD }],
    });
    let model = '';
    for await (const chunk of stream) model = chunk.model;
    expect(model).toBe('o-reasoner');
    expect((fake().requests.at(-1)?.body as Record<string, unknown>).reasoning_effort).toBe('high');
  });
});
