/**
 * Anthropic-only request fields and the `anthropic-beta` header on /v1/messages: unchanged to
 * Anthropic upstreams; translated (structured output, service tier) or refused with a 400
 * naming the field for other providers — never dropped silently.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEY = 'sk-test-native';
let stack: Stack;
let anthropic: Anthropic;

const schema = {
  type: 'object',
  properties: { city: { type: 'string' } },
  required: ['city'],
  additionalProperties: false,
};
const native = {
  output_format: { type: 'json_schema', schema },
  mcp_servers: [{ type: 'url', url: 'https://mcp.example.com/sse', name: 'example' }],
  service_tier: 'standard_only',
  container: 'container_123',
  output_config: { effort: 'low' },
  // A field Gantry has never heard of is Anthropic's too: it is carried, not dropped.
  inference_geo: 'us',
};
const BETA = 'structured-outputs-2025-11-13,mcp-client-2025-04-04';

beforeAll(async () => {
  stack = await startStack(([url]) =>
    [
      deployment({
        name: 'claude',
        model: 'claude-test',
        provider: 'anthropic',
        baseUrl: fakeBase(url!, 'anthropic'),
      }),
      deployment({
        name: 'gpt',
        model: 'gpt-test',
        baseUrl: fakeBase(url!),
        capabilities: ['chat', 'json_mode'],
      }),
      deployment({
        name: 'gemini',
        model: 'gemini-test',
        provider: 'gemini',
        baseUrl: fakeBase(url!, 'gemini'),
        capabilities: ['chat', 'json_mode'],
      }),
      tenant('acme'),
      apiKey('acme-key', KEY, 'acme'),
    ].join(''),
  );
  anthropic = new Anthropic({ baseURL: stack.gateway.url, apiKey: KEY, maxRetries: 0 });
});
afterAll(() => stack.close());

const lastUpstream = () => stack.fakes[0]!.requests.at(-1)!;

const send = (model: string, extra: Record<string, unknown>, beta?: string) =>
  anthropic.messages.create(
    {
      model,
      max_tokens: 200,
      messages: [{ role: 'user', content: 'Pick a city' }],
      ...extra,
    } as Anthropic.MessageCreateParamsNonStreaming,
    beta ? { headers: { 'anthropic-beta': beta } } : {},
  );

describe('to an Anthropic upstream', () => {
  it('passes every native field and the beta header through unchanged', async () => {
    await send('claude-test', native, BETA);
    const up = lastUpstream();
    expect(up.path).toBe('/v1/messages');
    expect(up.headers['anthropic-beta']).toBe(BETA);
    const body = up.body as Record<string, unknown>;
    for (const [field, value] of Object.entries(native)) expect(body[field], field).toEqual(value);
    // Anthropic enforces the schema itself: no JSON instruction was added to the prompt.
    expect(JSON.stringify(body.system ?? '')).not.toContain('JSON');
  });

  it('sends no beta header when the client sent none', async () => {
    await send('claude-test', {});
    expect(lastUpstream().headers['anthropic-beta']).toBeUndefined();
  });
});

describe('to other upstreams', () => {
  it('translates output_format into response_format json_schema and the tier for OpenAI', async () => {
    const msg = await send(
      'gpt-test',
      { output_format: native.output_format, service_tier: 'standard_only' },
      BETA,
    );
    const body = lastUpstream().body as Record<string, unknown>;
    expect(body.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'output', schema, strict: true },
    });
    expect(body.service_tier).toBe('default');
    expect(body.output_format).toBeUndefined();
    expect(body.anthropic_native).toBeUndefined();
    const text = msg.content[0]?.type === 'text' ? msg.content[0].text : '';
    expect(JSON.parse(text)).toEqual({ city: 'fake' });
  });

  it('translates output_config.format the same way', async () => {
    await send('gpt-test', { output_config: { format: { type: 'json_schema', schema } } });
    expect((lastUpstream().body as Record<string, unknown>).response_format).toMatchObject({
      type: 'json_schema',
    });
  });

  it.each(['gpt-test', 'gemini-test'])(
    'refuses mcp_servers and container for %s with a 400 naming them',
    async (model) => {
      for (const field of ['mcp_servers', 'container', 'inference_geo'] as const) {
        const before = stack.fakes[0]!.requests.length;
        const err = await send(model, { [field]: native[field] }).catch((e: unknown) => e);
        expect(err, field).toBeInstanceOf(Anthropic.BadRequestError);
        const body = (err as InstanceType<typeof Anthropic.BadRequestError>).error as {
          error: { message: string; param?: string };
        };
        expect(body.error.param).toBe(field);
        expect(body.error.message).toContain(field);
        expect(stack.fakes[0]!.requests.length).toBe(before);
      }
    },
  );

  it('refuses output_config options other than effort and format, naming the key', async () => {
    const err = await send('gpt-test', {
      output_config: { effort: 'low', task_budget: { type: 'tokens', total: 1000 } },
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect(
      ((err as InstanceType<typeof Anthropic.BadRequestError>).error as { error: { param: string } }).error
        .param,
    ).toBe('output_config.task_budget');
  });

  it('refuses an unknown service tier at the edge', async () => {
    const err = await send('gpt-test', { service_tier: 'priority' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect(JSON.stringify((err as InstanceType<typeof Anthropic.BadRequestError>).error)).toContain(
      'service_tier',
    );
  });
});
