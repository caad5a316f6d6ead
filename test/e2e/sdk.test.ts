/** The official SDKs against Gantry: both formats, every provider, streaming and tools. */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeAnswer } from '../../dataplane/src/fake-provider/index.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

const KEY = 'sk-test-sdk';
const providers = [
  { model: 'gpt-test', provider: 'openai' },
  { model: 'azure-test', provider: 'azure-openai' },
  { model: 'claude-test', provider: 'anthropic' },
  { model: 'gemini/flash-test', provider: 'gemini' },
  { model: 'vllm-test', provider: 'openai-compatible' },
] as const;

let stack: Stack;
let openai: OpenAI;
let anthropic: Anthropic;

const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Weather for a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

beforeAll(async () => {
  stack = await startStack(([url]) =>
    [
      ...providers.map((p) =>
        deployment({
          name: p.model.replace('/', '-'),
          model: p.model,
          provider: p.provider,
          upstreamModel: p.model.replace('gemini/', ''),
          baseUrl: fakeBase(url!, p.provider),
          extra: p.provider === 'azure-openai' ? { apiVersion: '2024-10-21' } : {},
          capabilities: ['chat', 'streaming', 'tools', 'vision', 'documents'],
        }),
      ),
      deployment({
        name: 'embed',
        model: 'embed-test',
        baseUrl: fakeBase(url!),
        capabilities: ['embeddings'],
      }),
      deployment({
        name: 'legacy',
        model: 'instruct-test',
        baseUrl: fakeBase(url!),
        capabilities: ['completions', 'streaming'],
      }),
      tenant('acme'),
      apiKey('acme-key', KEY, 'acme'),
    ].join(''),
  );
  openai = new OpenAI({ baseURL: stack.baseURL, apiKey: KEY, maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: stack.gateway.url, apiKey: KEY, maxRetries: 0 });
});
afterAll(() => stack.close());

describe.each(providers)('chat completions to $provider', ({ model }) => {
  it('answers non-streaming with usage and the served model', async () => {
    const { data, response } = await openai.chat.completions
      .create({ model, messages: [{ role: 'user', content: 'Hello from the SDK' }] })
      .withResponse();
    expect(data.choices[0]?.message.content).toBe(fakeAnswer('Hello from the SDK'));
    expect(data.model).toBe(model);
    expect(data.usage?.total_tokens).toBeGreaterThan(0);
    expect(response.headers.get('x-gantry-provider')).toBe(model.replace('/', '-'));
    expect(Number(response.headers.get('x-gantry-cost'))).toBeGreaterThan(0);
    expect(response.headers.get('x-gantry-attempts')).toBeNull();
  });

  it('streams the same answer with a final usage chunk', async () => {
    const stream = await openai.chat.completions.create({
      model,
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'Stream please' }],
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined | null;
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe(fakeAnswer('Stream please'));
    expect(finish).toBe('stop');
    expect(usage?.completion_tokens).toBeGreaterThan(0);
  });

  it('round-trips a tool call', async () => {
    const first = await openai.chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools: [weatherTool],
    });
    const call = first.choices[0]?.message.tool_calls?.[0];
    expect(first.choices[0]?.finish_reason).toBe('tool_calls');
    expect(call?.type === 'function' && call.function.name).toBe('get_weather');
    expect(JSON.parse(call?.type === 'function' ? call.function.arguments : '{}')).toEqual({ city: 'fake' });
    const second = await openai.chat.completions.create({
      model,
      tools: [weatherTool],
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: null, tool_calls: first.choices[0]!.message.tool_calls! },
        { role: 'tool', tool_call_id: call!.id, content: '{"temp": 21}' },
      ],
    });
    expect(second.choices[0]?.message.content).toBe(fakeAnswer('Weather in Paris?'));
  });

  it('streams tool calls', async () => {
    const stream = await openai.chat.completions.create({
      model,
      stream: true,
      tools: [weatherTool],
      messages: [{ role: 'user', content: 'Weather in Oslo?' }],
    });
    let name = '';
    let args = '';
    for await (const chunk of stream) {
      for (const t of chunk.choices[0]?.delta.tool_calls ?? []) {
        name += t.function?.name ?? '';
        args += t.function?.arguments ?? '';
      }
    }
    expect(name).toBe('get_weather');
    expect(JSON.parse(args)).toEqual({ city: 'fake' });
  });

  it('accepts images', async () => {
    const png =
      'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg==';
    const res = await openai.chat.completions.create({
      model,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in this picture?' },
            { type: 'image_url', image_url: { url: png } },
          ],
        },
      ],
    });
    expect(res.choices[0]?.message.content).toBe(fakeAnswer('What is in this picture?'));
  });
});

describe.each(providers)('Anthropic Messages to $provider', ({ model }) => {
  it('answers non-streaming', async () => {
    const msg = await anthropic.messages.create({
      model,
      max_tokens: 256,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Hello Claude client' }],
    });
    expect(msg.content[0]?.type === 'text' && msg.content[0].text).toBe(fakeAnswer('Hello Claude client'));
    expect(msg.stop_reason).toBe('end_turn');
    expect(msg.usage.output_tokens).toBeGreaterThan(0);
  });

  it('streams', async () => {
    const stream = anthropic.messages.stream({
      model,
      max_tokens: 256,
      messages: [{ role: 'user', content: 'Stream it, Claude client' }],
    });
    let text = '';
    stream.on('text', (t) => (text += t));
    const final = await stream.finalMessage();
    expect(text).toBe(fakeAnswer('Stream it, Claude client'));
    expect(final.stop_reason).toBe('end_turn');
    expect(final.usage.output_tokens).toBeGreaterThan(0);
  });

  it('calls tools, streaming', async () => {
    const stream = anthropic.messages.stream({
      model,
      max_tokens: 256,
      tools: [
        {
          name: 'get_weather',
          input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        },
      ],
      messages: [{ role: 'user', content: 'Weather in Rome?' }],
    });
    const final = await stream.finalMessage();
    const use = final.content.find((b) => b.type === 'tool_use');
    expect(final.stop_reason).toBe('tool_use');
    expect(use?.type === 'tool_use' && use.name).toBe('get_weather');
    expect(use?.type === 'tool_use' && use.input).toEqual({ city: 'fake' });
  });
});

describe('other endpoints', () => {
  it('embeds', async () => {
    const res = await openai.embeddings.create({ model: 'embed-test', input: ['a', 'b'] });
    expect(res.data).toHaveLength(2);
    expect(res.data[0]?.embedding.length).toBeGreaterThan(0);
    expect(res.model).toBe('embed-test');
  });

  it('completes (legacy), streaming and not', async () => {
    const res = await openai.completions.create({ model: 'instruct-test', prompt: 'Say hi' });
    expect(res.choices[0]?.text.length).toBeGreaterThan(0);
    const stream = await openai.completions.create({
      model: 'instruct-test',
      prompt: 'Say hi',
      stream: true,
    });
    let text = '';
    for await (const c of stream) text += c.choices[0]?.text ?? '';
    expect(text).toBe(res.choices[0]?.text);
  });

  it('lists exactly the enabled models', async () => {
    const list = await openai.models.list();
    expect(list.data.map((m) => m.id).sort()).toEqual(
      [...providers.map((p) => p.model), 'embed-test', 'instruct-test'].sort(),
    );
  });

  it('passes unknown standard parameters through unchanged', async () => {
    stack.fakes[0]!.reset();
    await openai.chat.completions.create({
      model: 'gpt-test',
      messages: [{ role: 'user', content: 'hi' }],
      seed: 42,
      logit_bias: { '50256': -100 },
      user: 'end-user-7',
    });
    const body = stack.fakes[0]!.requests.at(-1)?.body as Record<string, unknown>;
    expect(body.seed).toBe(42);
    expect(body.logit_bias).toEqual({ '50256': -100 });
    expect(body.user).toBe('end-user-7');
  });
});
