/** `POST /v1/generateContent` over raw HTTP: Gemini's body in, any provider, Gemini's answer out. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeAnswer } from '../../dataplane/src/fake-provider/index.ts';
import type { GeminiGenerateResponse } from '../../dataplane/src/providers/gemini/wire.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';
import { rawStream } from '../harness/raw-stream.ts';
import { usageRecord } from '../harness/usage-record.ts';

const KEY = 'sk-generate-content';
const OTHER_KEY = 'sk-generate-content-other';
const providers = [
  { model: 'gpt-test', provider: 'openai' },
  { model: 'claude-test', provider: 'anthropic' },
  { model: 'gemini/flash-test', provider: 'gemini' },
] as const;
let stack: Stack;

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
          capabilities: ['chat', 'streaming', 'tools', 'vision', 'json_mode'],
        }),
      ),
      tenant('acme'),
      tenant('globex', ['claude-test']),
      apiKey('acme-key', KEY, 'acme'),
      apiKey('globex-key', OTHER_KEY, 'globex'),
    ].join(''),
  );
});
afterAll(() => stack.close());

const generate = (body: unknown, query = '', key = KEY) =>
  fetch(`${stack.baseURL}/generateContent${query}`, {
    method: 'POST',
    headers: {
      'x-goog-api-key': 'ignored',
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify(body),
  });

const weather = {
  functionDeclarations: [
    {
      name: 'get_weather',
      description: 'Weather for a city',
      parameters: { type: 'OBJECT', properties: { city: { type: 'STRING' } }, required: ['city'] },
    },
  ],
};

describe.each(providers)('generateContent to $provider', ({ model }) => {
  it('answers in Gemini shape with usage, charged and recorded', async () => {
    const res = await generate({
      model,
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      contents: [{ role: 'user', parts: [{ text: 'Hello from Gemini' }] }],
      generationConfig: { temperature: 0.2, maxOutputTokens: 200 },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as GeminiGenerateResponse;
    const candidate = body.candidates?.[0];
    expect(candidate?.content?.role).toBe('model');
    expect(candidate?.content?.parts).toEqual([{ text: fakeAnswer('Hello from Gemini') }]);
    expect(candidate?.finishReason).toBe('STOP');
    expect(body.modelVersion).toBe(model);
    const usage = body.usageMetadata!;
    expect(usage.promptTokenCount).toBeGreaterThan(0);
    expect(usage.totalTokenCount).toBe(usage.promptTokenCount! + usage.candidatesTokenCount!);
    const cost = Number(res.headers.get('x-gantry-cost'));
    expect(cost).toBeGreaterThan(0);
    const record = await usageRecord(stack, 'acme', res.headers.get('x-gantry-request-id'));
    expect(record).toMatchObject({ endpoint: 'generate_content', requestedModel: model, costUsd: cost });
  });

  it('round-trips a function call', async () => {
    const first = (await (
      await generate(
        { contents: [{ role: 'user', parts: [{ text: 'Weather in Paris?' }] }], tools: [weather] },
        `?model=${encodeURIComponent(model)}`,
      )
    ).json()) as GeminiGenerateResponse;
    const call = first.candidates?.[0]?.content?.parts?.[0]?.functionCall;
    expect(call).toEqual({ name: 'get_weather', args: { city: 'fake' } });
    const second = await generate({
      model: `models/${model}`,
      tools: [weather],
      contents: [
        { role: 'user', parts: [{ text: 'Weather in Paris?' }] },
        { role: 'model', parts: [{ functionCall: call }] },
        { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { temp: 21 } } }] },
      ],
    });
    const answer = (await second.json()) as GeminiGenerateResponse;
    expect(answer.candidates?.[0]?.content?.parts).toEqual([{ text: fakeAnswer('Weather in Paris?') }]);
  });
});

describe('generateContent edge', () => {
  it('translates the body for the upstream: system, images, JSON schema in lower-case types', async () => {
    stack.fakes[0]!.reset();
    const res = await generate({
      model: 'gpt-test',
      systemInstruction: { parts: [{ text: 'You are terse.' }] },
      contents: [
        {
          role: 'user',
          parts: [{ text: 'What is this?' }, { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } }],
        },
      ],
      generationConfig: {
        responseMimeType: 'application/json',
        responseSchema: { type: 'OBJECT', properties: { name: { type: 'STRING' } } },
        stopSequences: ['END'],
      },
    });
    expect(res.status).toBe(200);
    const sent = stack.fakes[0]!.requests.at(-1)!.body as Record<string, unknown>;
    expect(sent.messages).toEqual([
      { role: 'system', content: 'You are terse.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
        ],
      },
    ]);
    expect(sent.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'response', schema: { type: 'object', properties: { name: { type: 'string' } } } },
    });
    expect(sent.stop).toEqual(['END']);
  });

  it('names the missing or unsupported field', async () => {
    const noModel = await generate({ contents: [{ parts: [{ text: 'hi' }] }] });
    expect(noModel.status).toBe(400);
    expect(((await noModel.json()) as { error: { message: string } }).error.message).toContain('model');
    const noContents = await generate({ model: 'gpt-test' });
    expect(((await noContents.json()) as { error: { message: string } }).error.message).toContain('contents');
    const search = await generate({
      model: 'gpt-test',
      contents: [{ parts: [{ text: 'hi' }] }],
      tools: [{ googleSearch: {} }],
    });
    expect(search.status).toBe(400);
    expect(((await search.json()) as { error: { message: string } }).error.message).toContain(
      'tools[0].googleSearch',
    );
  });

  it('keeps to the key: a model outside the tenant is a 404, no key is a 401', async () => {
    const body = { model: 'gpt-test', contents: [{ parts: [{ text: 'hi' }] }] };
    expect((await generate(body, '', OTHER_KEY)).status).toBe(404);
    expect((await generate(body, '', 'sk-wrong')).status).toBe(401);
  });
});

const streamed = (path: string, body: Record<string, unknown>, key = KEY) =>
  rawStream(`${stack.baseURL}${path}`, { authorization: `Bearer ${key}` }, body);

interface StreamEvent {
  candidates?: { content?: { parts?: { text?: string; functionCall?: unknown }[] }; finishReason?: string }[];
  usageMetadata?: { promptTokenCount?: number; candidatesTokenCount?: number; totalTokenCount?: number };
  modelVersion?: string;
}

const textOf = (events: StreamEvent[]): string =>
  events
    .flatMap((e) => e.candidates?.[0]?.content?.parts ?? [])
    .map((p) => p.text ?? '')
    .join('');

describe.each(providers)('streamGenerateContent to $provider', ({ model }) => {
  it('streams Gemini events with ?alt=sse, the last with finish reason and usage, charged and recorded', async () => {
    const res = await streamed(`/models/${encodeURIComponent(model)}:streamGenerateContent?alt=sse`, {
      contents: [{ role: 'user', parts: [{ text: 'Stream from Gemini' }] }],
    });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toContain('text/event-stream');
    const events = res.events as StreamEvent[];
    expect(events.length).toBeGreaterThan(1);
    expect(textOf(events)).toBe(fakeAnswer('Stream from Gemini'));
    const last = events.at(-1)!;
    expect(last.candidates?.[0]?.finishReason).toBe('STOP');
    expect(last.modelVersion).toBe(model);
    const usage = last.usageMetadata!;
    expect(usage.promptTokenCount).toBeGreaterThan(0);
    expect(usage.candidatesTokenCount).toBeGreaterThan(0);
    const cost = Number(res.trailers['x-gantry-cost']);
    expect(cost).toBeGreaterThan(0);
    const record = await usageRecord(stack, 'acme', res.headers['x-gantry-request-id'] as string);
    expect(record).toMatchObject({ endpoint: 'generate_content', stream: true, costUsd: cost });
  });

  it('sends a streamed function call whole, with parsed args', async () => {
    const res = await streamed('/streamGenerateContent?alt=sse', {
      model,
      tools: [weather],
      contents: [{ role: 'user', parts: [{ text: 'Weather in Paris?' }] }],
    });
    const calls = (res.events as StreamEvent[])
      .flatMap((e) => e.candidates?.[0]?.content?.parts ?? [])
      .filter((p) => p.functionCall);
    expect(calls).toEqual([{ functionCall: { name: 'get_weather', args: { city: 'fake' } } }]);
  });
});

describe('streamGenerateContent edge', () => {
  const body = { contents: [{ parts: [{ text: 'hi' }] }] };

  it('answers generateContent on the model path too', async () => {
    const res = await fetch(`${stack.baseURL}/models/gpt-test:generateContent`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    const answer = (await res.json()) as GeminiGenerateResponse;
    expect(answer.candidates?.[0]?.content?.parts).toEqual([{ text: fakeAnswer('hi') }]);
  });

  it('refuses a stream without alt=sse and an unknown method, naming them', async () => {
    const noAlt = await streamed('/models/gpt-test:streamGenerateContent', body);
    expect(noAlt.status).toBe(400);
    expect(noAlt.text).toContain('alt=sse');
    const unknown = await streamed('/models/gpt-test:countTokens?alt=sse', body);
    expect(unknown.status).toBe(404);
    expect(unknown.text).toContain(':streamGenerateContent');
  });

  it('keeps to the key: a model outside the tenant is a 404 before any event', async () => {
    const res = await streamed('/models/gpt-test:streamGenerateContent?alt=sse', body, OTHER_KEY);
    expect(res.status).toBe(404);
    expect(JSON.parse(res.text)).toMatchObject({
      error: { code: 404, message: expect.stringContaining('gpt-test') },
    });
  });

  it('ends a stream the upstream broke with a Gemini error event, uncharged', async () => {
    const fake = stack.fakes[0]!;
    fake.reset();
    fake.setFaults([{ times: 1, fault: { type: 'break-stream', afterChunks: 1 } }]);
    const res = await streamed('/models/gpt-test:streamGenerateContent?alt=sse', body);
    expect(res.status).toBe(200);
    const last = res.events.at(-1) as { error?: { code: number; status: string; type: string } };
    expect(last.error).toMatchObject({ code: 502, type: 'upstream_error' });
    expect(Number(res.trailers['x-gantry-cost'])).toBe(0);
  });
});
