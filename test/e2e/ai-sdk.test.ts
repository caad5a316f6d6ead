/**
 * The Vercel AI SDK's default OpenAI provider against Gantry: `openai(model)` speaks the
 * Responses API, so generateText/streamText/generateObject work with only a base URL change.
 */
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { generateObject, generateText, jsonSchema, streamText, tool } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeAnswer } from '../../dataplane/src/fake-provider/index.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEY = 'sk-test-ai-sdk';
let stack: Stack;
let openai: ReturnType<typeof createOpenAI>;
let anthropic: ReturnType<typeof createAnthropic>;
const gatewayPaths: string[] = [];

beforeAll(async () => {
  stack = await startStack(([url]) =>
    [
      deployment({
        name: 'gpt-test',
        model: 'gpt-test',
        baseUrl: fakeBase(url!),
        capabilities: ['chat', 'streaming', 'tools', 'json_mode'],
      }),
      deployment({
        name: 'claude-test',
        model: 'claude-test',
        provider: 'anthropic',
        baseUrl: fakeBase(url!, 'anthropic'),
        capabilities: ['chat', 'streaming', 'tools'],
      }),
      tenant('acme'),
      apiKey('acme-key', KEY, 'acme'),
    ].join(''),
  );
  // Records which gateway route each SDK call used.
  const recording: typeof fetch = (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    gatewayPaths.push(new URL(url).pathname);
    return fetch(input, init);
  };
  openai = createOpenAI({ baseURL: stack.baseURL, apiKey: KEY, fetch: recording });
  anthropic = createAnthropic({ baseURL: stack.baseURL, apiKey: KEY, fetch: recording });
});
afterAll(() => stack.close());

const lastPath = (): string => stack.fakes[0]!.requests.at(-1)!.path;

describe.each(['gpt-test', 'claude-test'])('AI SDK openai(%s)', (model) => {
  it('generateText goes through /v1/responses', async () => {
    const result = await generateText({ model: openai(model), prompt: 'Hello AI SDK', maxRetries: 0 });
    expect(result.text).toBe(fakeAnswer('Hello AI SDK'));
    expect(result.usage.inputTokens).toBeGreaterThan(0);
    expect(result.usage.outputTokens).toBeGreaterThan(0);
    expect(result.finishReason).toBe('stop');
    expect(gatewayPaths.at(-1)).toBe('/v1/responses');
    expect(lastPath()).toBe(model === 'gpt-test' ? '/v1/chat/completions' : '/v1/messages');
  });

  it('streamText streams the answer', async () => {
    const result = streamText({ model: openai(model), prompt: 'Stream via AI SDK', maxRetries: 0 });
    let text = '';
    for await (const delta of result.textStream) text += delta;
    expect(text).toBe(fakeAnswer('Stream via AI SDK'));
    expect((await result.usage).outputTokens).toBeGreaterThan(0);
  });

  it('calls a tool', async () => {
    const result = await generateText({
      model: openai(model),
      prompt: 'Weather in Oslo?',
      maxRetries: 0,
      tools: {
        get_weather: tool({
          description: 'Weather for a city',
          inputSchema: jsonSchema<{ city: string }>({
            type: 'object',
            properties: { city: { type: 'string' } },
            required: ['city'],
            additionalProperties: false,
          }),
        }),
      },
    });
    expect(result.toolCalls).toHaveLength(1);
    expect(result.toolCalls[0]).toMatchObject({ toolName: 'get_weather', input: { city: 'fake' } });
  });
});

describe('AI SDK generateObject', () => {
  it('returns an object satisfying the schema (json_schema structured output)', async () => {
    const result = await generateObject({
      model: openai('gpt-test'),
      prompt: 'A city as JSON',
      maxRetries: 0,
      schema: jsonSchema<{ city: string; population: number }>({
        type: 'object',
        properties: { city: { type: 'string' }, population: { type: 'number' } },
        required: ['city', 'population'],
        additionalProperties: false,
      }),
    });
    expect(result.object).toEqual({ city: 'fake', population: 1 });
    expect(gatewayPaths.at(-1)).toBe('/v1/responses');
    const sent = stack.fakes[0]!.requests.at(-1)!.body as { response_format?: { type: string } };
    expect(sent.response_format?.type).toBe('json_schema');
  });
});

const citySchema = jsonSchema<{ city: string; population: number }>({
  type: 'object',
  properties: { city: { type: 'string' }, population: { type: 'number' } },
  required: ['city', 'population'],
  additionalProperties: false,
});

describe.each(['claude-test', 'gpt-test'])('AI SDK anthropic(%s) through /v1/messages', (model) => {
  it('generateText and streamText', async () => {
    const result = await generateText({ model: anthropic(model), prompt: 'Hello Claude SDK', maxRetries: 0 });
    expect(result.text).toBe(fakeAnswer('Hello Claude SDK'));
    expect(result.usage.inputTokens).toBeGreaterThan(0);
    expect(gatewayPaths.at(-1)).toBe('/v1/messages');
    const streamed = streamText({ model: anthropic(model), prompt: 'Stream Claude SDK', maxRetries: 0 });
    let text = '';
    for await (const delta of streamed.textStream) text += delta;
    expect(text).toBe(fakeAnswer('Stream Claude SDK'));
  });

  it('generateObject with output_config.format (native structured output)', async () => {
    const result = await generateObject({
      model: anthropic(model),
      prompt: 'A city',
      maxRetries: 0,
      schema: citySchema,
      providerOptions: { anthropic: { structuredOutputMode: 'outputFormat' } },
    });
    expect(result.object).toEqual({ city: 'fake', population: 1 });
    const up = stack.fakes[0]!.requests.at(-1)!;
    const body = up.body as { output_config?: { format?: unknown }; response_format?: { type: string } };
    if (model === 'claude-test') expect(body.output_config?.format).toMatchObject({ type: 'json_schema' });
    else expect(body.response_format?.type).toBe('json_schema');
  });

  it('generateObject in the SDK default mode (a forced json tool)', async () => {
    const result = await generateObject({
      model: anthropic(model),
      prompt: 'A city',
      maxRetries: 0,
      schema: citySchema,
    });
    expect(result.object).toEqual({ city: 'fake', population: 1 });
  });
});
