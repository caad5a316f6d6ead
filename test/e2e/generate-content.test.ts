/** `POST /v1/generateContent` over raw HTTP: Gemini's body in, any provider, Gemini's answer out. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeAnswer } from '../../dataplane/src/fake-provider/index.ts';
import type { GeminiGenerateResponse } from '../../dataplane/src/providers/gemini/wire.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';
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
          capabilities: ['chat', 'tools', 'vision', 'json_mode'],
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
