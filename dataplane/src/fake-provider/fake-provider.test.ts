import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { SseParser } from '../formats/sse.ts';
import type { SseEvent } from '../formats/sse.ts';
import { countTokens, cutToCap, fakeAnswer, fakeEmbedding, startFakeProvider } from './index.ts';
import { untilReleased, type Held } from './transport.ts';
import type { FakeProvider } from './index.ts';

let fp: FakeProvider;
beforeAll(async () => {
  fp = await startFakeProvider();
});
afterEach(() => fp.reset());
afterAll(() => fp.close());

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- test assertions on wire JSON

const OPENAI = { authorization: 'Bearer sk-test' };
const ANTHROPIC = { 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01' };
const GEMINI = { 'x-goog-api-key': 'g-test' };
const AZURE = { 'api-key': 'az-test' };

function post(path: string, body: unknown, headers: Record<string, string> = OPENAI, signal?: AbortSignal) {
  const payload = typeof body === 'string' ? body : JSON.stringify(body);
  return fetch(`${fp.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: payload,
    signal,
  });
}

interface Read {
  events: SseEvent[];
  end: 'done' | 'error' | 'idle';
  raw: string;
}

/** Reads an SSE body until it ends, fails, or stays silent for `idleMs`. */
async function readEvents(res: Response, idleMs = 1000): Promise<Read> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const parser = new SseParser();
  const events: SseEvent[] = [];
  let raw = '';
  for (;;) {
    let timer: NodeJS.Timeout | undefined;
    const idle = new Promise<'idle'>((r) => (timer = setTimeout(() => r('idle'), idleMs)));
    let step: Awaited<ReturnType<typeof reader.read>> | 'idle';
    try {
      step = await Promise.race([reader.read(), idle]);
    } catch {
      clearTimeout(timer);
      return { events, end: 'error', raw };
    }
    clearTimeout(timer);
    if (step === 'idle') {
      await reader.cancel().catch(() => undefined);
      return { events, end: 'idle', raw };
    }
    if (step.done) {
      events.push(...parser.end());
      return { events, end: 'done', raw };
    }
    const text = decoder.decode(step.value, { stream: true });
    raw += text;
    events.push(...parser.push(text));
  }
}

const jsonEvents = (r: Read): Json[] =>
  r.events.filter((e) => e.data !== '[DONE]').map((e) => JSON.parse(e.data) as Json);
const openaiText = (r: Read): string =>
  jsonEvents(r)
    .map((c) => c.choices?.[0]?.delta?.content ?? '')
    .join('');

const WEATHER_TOOL = {
  type: 'function',
  function: {
    name: 'get_weather',
    parameters: {
      type: 'object',
      properties: {
        city: { type: 'string' },
        days: { type: 'integer' },
        metric: { type: 'boolean' },
        unit: { type: 'string', enum: ['c', 'f'] },
        note: { type: 'string' },
      },
      required: ['city', 'days', 'metric', 'unit'],
    },
  },
};
const WEATHER_ARGS = { city: 'fake', days: 1, metric: true, unit: 'c' };

describe('deterministic behaviour', () => {
  it('answers from the last user text only', () => {
    expect(fakeAnswer('  Hello\n  world ')).toBe(
      'Fake answer to: Hello world. The quick brown fox jumps over the lazy dog.',
    );
    expect(fakeAnswer('x'.repeat(100))).toBe(
      `Fake answer to: ${'x'.repeat(60)}. The quick brown fox jumps over the lazy dog.`,
    );
  });

  it('embeds deterministically into unit vectors, closer when words are shared', () => {
    const a = fakeEmbedding('the capital of France');
    expect(a).toHaveLength(16);
    expect(Math.hypot(...a)).toBeCloseTo(1, 6);
    expect(fakeEmbedding('The  capital of FRANCE')).toEqual(a);
    const cos = (x: number[], y: number[]): number => x.reduce((n, v, i) => n + v * (y[i] ?? 0), 0);
    const near = cos(a, fakeEmbedding('the capital of Germany'));
    const far = cos(a, fakeEmbedding('zebra quantum pancake recipe'));
    expect(near).toBeGreaterThan(far);
  });
});

describe('OpenAI', () => {
  const chat = {
    model: 'gpt-4o-mini',
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'What is the capital of France?' },
    ],
  };
  const answer = fakeAnswer('What is the capital of France?');

  it('answers chat completions and records the request', async () => {
    const res = await post('/v1/chat/completions', chat);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Json;
    expect(body.object).toBe('chat.completion');
    expect(body.model).toBe('gpt-4o-mini');
    expect(body.choices[0].message).toMatchObject({ role: 'assistant', content: answer });
    expect(body.choices[0].finish_reason).toBe('stop');
    const prompt = Math.ceil(('Be brief.'.length + 'What is the capital of France?'.length) / 4);
    expect(body.usage).toMatchObject({ prompt_tokens: prompt, completion_tokens: countTokens(answer) });
    expect(body.usage.total_tokens).toBe(prompt + countTokens(answer));
    expect(fp.requests).toHaveLength(1);
    expect(fp.requests[0]).toMatchObject({ method: 'POST', path: '/v1/chat/completions', body: chat });
    expect(fp.requests[0]?.headers.authorization).toBe('Bearer sk-test');
  });

  it('counts image parts and ignores the model for the answer', async () => {
    const res = await post('/v1/chat/completions', {
      model: 'other',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is the capital of France?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
          ],
        },
      ],
    });
    const body = (await res.json()) as Json;
    expect(body.choices[0].message.content).toBe(answer);
    expect(body.usage.prompt_tokens).toBe(Math.ceil(30 / 4) + 85);
  });

  it('streams word chunks, usage only when asked, then [DONE]', async () => {
    const plain = await readEvents(await post('/v1/chat/completions', { ...chat, stream: true }));
    expect(plain.end).toBe('done');
    expect(plain.events.at(-1)?.data).toBe('[DONE]');
    expect(openaiText(plain)).toBe(answer);
    expect(jsonEvents(plain).length).toBeGreaterThan(8);
    expect(jsonEvents(plain).some((c) => c.usage)).toBe(false);
    expect(jsonEvents(plain).at(-1)?.choices[0].finish_reason).toBe('stop');

    const withUsage = await readEvents(
      await post('/v1/chat/completions', { ...chat, stream: true, stream_options: { include_usage: true } }),
    );
    const chunks = jsonEvents(withUsage);
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage.completion_tokens).toBe(countTokens(answer));
    expect(chunks[0]?.usage).toBeNull();
  });

  it('calls the first tool, then answers after the tool result', async () => {
    const req = { ...chat, tools: [WEATHER_TOOL, { type: 'function', function: { name: 'other' } }] };
    const body = (await (await post('/v1/chat/completions', req)).json()) as Json;
    expect(body.choices[0].finish_reason).toBe('tool_calls');
    const call = body.choices[0].message.tool_calls[0];
    expect(call.function.name).toBe('get_weather');
    expect(JSON.parse(call.function.arguments)).toEqual(WEATHER_ARGS);
    expect(body.usage.completion_tokens).toBe(countTokens(call.function.arguments));

    const stream = await readEvents(await post('/v1/chat/completions', { ...req, stream: true }));
    const chunks = jsonEvents(stream);
    expect(chunks[0]?.choices[0].delta.tool_calls[0]).toMatchObject({
      index: 0,
      function: { name: 'get_weather' },
    });
    const args = chunks.map((c) => c.choices[0]?.delta?.tool_calls?.[0]?.function?.arguments ?? '').join('');
    expect(JSON.parse(args)).toEqual(WEATHER_ARGS);
    expect(chunks.at(-1)?.choices[0].finish_reason).toBe('tool_calls');

    const forced = await post('/v1/chat/completions', {
      ...req,
      tool_choice: { type: 'function', function: { name: 'other' } },
    });
    expect(((await forced.json()) as Json).choices[0].message.tool_calls[0].function.name).toBe('other');

    const none = await post('/v1/chat/completions', { ...req, tool_choice: 'none' });
    expect(((await none.json()) as Json).choices[0].message.content).toBe(answer);

    const after = await post('/v1/chat/completions', {
      ...req,
      messages: [
        ...chat.messages,
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: call.function }],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
      ],
    });
    expect(((await after.json()) as Json).choices[0].message.content).toBe(answer);
  });

  it('rejects an orphan tool message like OpenAI does', async () => {
    const res = await post('/v1/chat/completions', {
      model: 'm',
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
      ],
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as Json).error.type).toBe('invalid_request_error');
  });

  it('continues a final assistant message only with continue_final_message', async () => {
    const messages = [...chat.messages, { role: 'assistant', content: 'Fake answer to:' }];
    const cont = await post('/v1/chat/completions', { ...chat, messages, continue_final_message: true });
    expect(((await cont.json()) as Json).choices[0].message.content).toBe(
      answer.slice('Fake answer to:'.length),
    );
    const plain = await post('/v1/chat/completions', { ...chat, messages });
    expect(((await plain.json()) as Json).choices[0].message.content).toBe(answer);
    const mismatch = [...chat.messages, { role: 'assistant', content: 'Sure!' }];
    const other = await post('/v1/chat/completions', {
      ...chat,
      messages: mismatch,
      continue_final_message: true,
    });
    expect(((await other.json()) as Json).choices[0].message.content).toBe(answer);
  });

  it('answers legacy completions, plain and streamed', async () => {
    const body = (await (
      await post('/v1/completions', { model: 'gpt-3.5-turbo-instruct', prompt: 'Say hi', max_tokens: 100 })
    ).json()) as Json;
    expect(body.object).toBe('text_completion');
    expect(body.choices[0].text).toBe(fakeAnswer('Say hi'));
    expect(body.usage.prompt_tokens).toBe(2);
    const stream = await readEvents(
      await post('/v1/completions', {
        model: 'm',
        prompt: 'Say hi',
        max_tokens: 100,
        stream: true,
        stream_options: { include_usage: true },
      }),
    );
    const chunks = jsonEvents(stream);
    expect(chunks.map((c) => c.choices[0]?.text ?? '').join('')).toBe(fakeAnswer('Say hi'));
    expect(chunks.at(-1)?.usage.total_tokens).toBe(2 + countTokens(fakeAnswer('Say hi')));
    expect(stream.events.at(-1)?.data).toBe('[DONE]');
  });

  it('streams an echoed legacy prompt whole, in the first token’s event, with logprobs as vLLM sends them', async () => {
    const prompt = 'abcdefghij'.repeat(1000);
    const stream = await readEvents(
      await post('/vllm/v1/completions', {
        model: 'm',
        prompt,
        max_tokens: 100,
        stream: true,
        echo: true,
        logprobs: 20,
      }),
    );
    const chunks = jsonEvents(stream).filter((c) => c.choices[0]?.finish_reason === null);
    const [first, ...rest] = chunks;
    const choice = first!.choices[0];
    const answer = fakeAnswer(prompt);
    const firstWord = answer.match(/^\s*\S+/)![0];
    // vLLM: the echoed prompt and the first generated token travel in one event.
    expect(choice.text).toBe(prompt + firstWord);
    expect(choice.logprobs.tokens.join('')).toBe(prompt + firstWord);
    expect(choice.logprobs.tokens).toHaveLength(countTokens(prompt) + countTokens(firstWord));
    expect(choice.logprobs.token_logprobs[0]).toBeNull();
    expect(Object.keys(choice.logprobs.top_logprobs[1] as object)).toHaveLength(20);
    // The size that lets a caller make an event past a gateway's bound with a long prompt.
    const perToken = Buffer.byteLength(stream.events[0]!.data) / countTokens(prompt);
    expect(perToken).toBeGreaterThan(500);
    expect(rest.map((c) => c.choices[0]?.text ?? '').join('')).toBe(answer.slice(firstWord.length));
    // Generated tokens carry their logprobs too, offsets running on from the prompt.
    const second = rest[0]!.choices[0];
    expect(second.logprobs.tokens.join('')).toBe(second.text);
    expect(second.logprobs.text_offset[0]).toBe(prompt.length + firstWord.length);
    expect(second.logprobs.token_logprobs.every((l: unknown) => typeof l === 'number')).toBe(true);
    // Without logprobs, no logprobs; without echo, no prompt.
    const plain = jsonEvents(
      await readEvents(
        await post('/v1/completions', { model: 'm', prompt: 'Say hi', stream: true, echo: true }),
      ),
    );
    expect(plain[0]!.choices[0]).toMatchObject({ logprobs: null });
    expect(plain[0]!.choices[0].text.startsWith('Say hi')).toBe(true);
  });

  it('refuses more logprobs alternatives than vLLM’s default max_logprobs (20) with a 400', async () => {
    const res = await post('/vllm/v1/completions', { model: 'm', prompt: 'hi', logprobs: 21 });
    expect(res.status).toBe(400);
    expect(((await res.json()) as Json).error).toMatchObject({
      param: 'logprobs',
      type: 'invalid_request_error',
    });
    expect((await post('/vllm/v1/completions', { model: 'm', prompt: 'hi', logprobs: 20 })).status).toBe(200);
  });

  it.each([
    ['/v1/completions', 'logprobs', 0, 5, { prompt: 'hi' }],
    [
      '/v1/chat/completions',
      'top_logprobs',
      0,
      20,
      { messages: [{ role: 'user', content: 'hi' }], logprobs: true },
    ],
  ] as const)('as OpenAI, %s caps %s at %i–%i with its range error', async (path, param, min, max, base) => {
    const ask = (value: number) => post(path, { model: 'm', ...base, [param]: value });
    expect((await ask(max)).status).toBe(200);
    expect((await ask(min)).status).toBe(200);
    const above = await ask(max + 1);
    expect(above.status).toBe(400);
    expect(await above.json()).toEqual({
      error: {
        message: `Invalid '${param}': integer above maximum value. Expected a value <= ${max}, but got ${max + 1} instead.`,
        type: 'invalid_request_error',
        param,
        code: 'integer_above_max_value',
      },
    });
    const below = await ask(min - 1);
    expect(below.status).toBe(400);
    expect(((await below.json()) as Json).error).toMatchObject({
      message: `Invalid '${param}': integer below minimum value. Expected a value >= ${min}, but got ${min - 1} instead.`,
      param,
      code: 'integer_below_min_value',
    });
  });

  it('embeds with dimensions and base64', async () => {
    const body = (await (
      await post('/v1/embeddings', { model: 'text-embedding-3-small', input: ['hello world', 'bye'] })
    ).json()) as Json;
    expect(body.object).toBe('list');
    expect(body.data[1]).toMatchObject({ object: 'embedding', index: 1 });
    expect(body.data[0].embedding).toEqual(fakeEmbedding('hello world'));
    expect(body.usage).toEqual({ prompt_tokens: 3 + 1, total_tokens: 4 });
    const small = (await (
      await post('/v1/embeddings', { model: 'e', input: 'hi', dimensions: 8 })
    ).json()) as Json;
    expect(small.data[0].embedding).toHaveLength(8);
    const b64 = (await (
      await post('/v1/embeddings', { model: 'e', input: 'hi', encoding_format: 'base64' })
    ).json()) as Json;
    const buf = Buffer.from(b64.data[0].embedding as string, 'base64');
    const floats = Array.from({ length: buf.length / 4 }, (_, i) => buf.readFloatLE(i * 4));
    fakeEmbedding('hi').forEach((v, i) => expect(floats[i]).toBeCloseTo(v, 6));
  });

  it('lists models, rejects missing keys and bad JSON', async () => {
    const models = (await (await fetch(`${fp.url}/v1/models`, { headers: OPENAI })).json()) as Json;
    expect(models.object).toBe('list');
    expect(models.data[0]).toMatchObject({ object: 'model' });
    const noKey = await post('/v1/chat/completions', chat, {});
    expect(noKey.status).toBe(401);
    expect(((await noKey.json()) as Json).error).toMatchObject({ type: 'invalid_request_error' });
    const badJson = await post('/v1/chat/completions', '{"model":');
    expect(badJson.status).toBe(400);
    expect(((await badJson.json()) as Json).error.message).toMatch(/JSON/);
    expect(fp.requests.at(-1)?.body).toBeUndefined();
  });
});

describe('Azure OpenAI', () => {
  const path = '/openai/deployments/my-gpt/chat/completions?api-version=2024-10-21';
  const req = { messages: [{ role: 'user', content: 'Hello Azure' }] };

  it('answers with filter annotations and the deployment as model', async () => {
    const body = (await (await post(path, req, AZURE)).json()) as Json;
    expect(body.model).toBe('my-gpt');
    expect(body.choices[0].message.content).toBe(fakeAnswer('Hello Azure'));
    expect(body.prompt_filter_results).toBeDefined();
  });

  it('streams with a leading filter-only chunk', async () => {
    const stream = await readEvents(await post(path, { ...req, stream: true }, AZURE));
    const chunks = jsonEvents(stream);
    expect(chunks[0]).toMatchObject({ choices: [], id: '' });
    expect(openaiText(stream)).toBe(fakeAnswer('Hello Azure'));
    expect(stream.events.at(-1)?.data).toBe('[DONE]');
  });

  it('needs api-key and api-version', async () => {
    const noKey = await post(path, req, {});
    expect(noKey.status).toBe(401);
    expect(((await noKey.json()) as Json).error.code).toBe('401');
    const noVersion = await post('/openai/deployments/my-gpt/chat/completions', req, AZURE);
    expect(noVersion.status).toBe(404);
    const emb = await post(
      '/openai/deployments/emb/embeddings?api-version=2024-10-21',
      { input: 'x' },
      AZURE,
    );
    expect(((await emb.json()) as Json).data[0].embedding).toEqual(fakeEmbedding('x'));
  });
});

describe('Anthropic', () => {
  const msg = {
    model: 'claude-sonnet-4',
    max_tokens: 100,
    system: 'Be brief.',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'Tell me a joke' }] }],
  };
  const answer = fakeAnswer('Tell me a joke');
  const tool = {
    name: 'get_weather',
    input_schema: WEATHER_TOOL.function.parameters,
  };

  it('answers messages', async () => {
    const res = await post('/v1/messages', msg, ANTHROPIC);
    const body = (await res.json()) as Json;
    expect(res.headers.get('request-id')).toMatch(/^req_/);
    expect(body).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4',
      stop_reason: 'end_turn',
    });
    expect(body.content).toEqual([{ type: 'text', text: answer }]);
    expect(body.usage).toMatchObject({ input_tokens: Math.ceil(23 / 4), output_tokens: countTokens(answer) });
  });

  it('streams the full event sequence', async () => {
    const stream = await readEvents(await post('/v1/messages', { ...msg, stream: true }, ANTHROPIC));
    const names = stream.events.map((e) => e.event);
    expect(names.slice(0, 3)).toEqual(['message_start', 'content_block_start', 'ping']);
    expect(names.slice(-3)).toEqual(['content_block_stop', 'message_delta', 'message_stop']);
    const deltas = stream.events
      .filter((e) => e.event === 'content_block_delta')
      .map((e) => JSON.parse(e.data) as Json);
    expect(deltas.length).toBeGreaterThan(8);
    expect(deltas.map((d) => d.delta.text).join('')).toBe(answer);
    const delta = JSON.parse(stream.events.at(-2)!.data) as Json;
    expect(delta).toMatchObject({
      delta: { stop_reason: 'end_turn' },
      usage: { output_tokens: countTokens(answer) },
    });
  });

  it('uses a tool, streams input_json_delta, then answers after tool_result', async () => {
    const body = (await (await post('/v1/messages', { ...msg, tools: [tool] }, ANTHROPIC)).json()) as Json;
    expect(body.stop_reason).toBe('tool_use');
    expect(body.content[0]).toMatchObject({ type: 'tool_use', name: 'get_weather', input: WEATHER_ARGS });
    const stream = await readEvents(
      await post('/v1/messages', { ...msg, tools: [tool], stream: true }, ANTHROPIC),
    );
    const parsed = stream.events.map((e) => JSON.parse(e.data) as Json);
    expect(parsed[1]?.content_block).toMatchObject({ type: 'tool_use', name: 'get_weather', input: {} });
    const json = parsed
      .filter((p) => p.delta?.type === 'input_json_delta')
      .map((p) => p.delta.partial_json)
      .join('');
    expect(JSON.parse(json)).toEqual(WEATHER_ARGS);
    const id = body.content[0].id as string;
    const after = await post(
      '/v1/messages',
      {
        ...msg,
        tools: [tool],
        messages: [
          ...msg.messages,
          { role: 'assistant', content: body.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: 'sunny' }] },
        ],
      },
      ANTHROPIC,
    );
    expect(((await after.json()) as Json).content[0].text).toBe(answer);
  });

  it('continues a prefill and rejects trailing whitespace in it', async () => {
    const prefill = {
      ...msg,
      messages: [...msg.messages, { role: 'assistant', content: 'Fake answer to: Tell' }],
    };
    const body = (await (await post('/v1/messages', prefill, ANTHROPIC)).json()) as Json;
    expect(body.content[0].text).toBe(answer.slice('Fake answer to: Tell'.length));
    const trailing = { ...msg, messages: [...msg.messages, { role: 'assistant', content: 'Fake ' }] };
    const res = await post('/v1/messages', trailing, ANTHROPIC);
    expect(res.status).toBe(400);
  });

  it('speaks its own auth, version and validation errors', async () => {
    const noKey = await post('/v1/messages', msg, { 'anthropic-version': '2023-06-01' });
    expect(noKey.status).toBe(401);
    expect(await noKey.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    const noVersion = await post('/v1/messages', msg, { 'x-api-key': 'k' });
    expect(noVersion.status).toBe(400);
    const noMax = await post('/v1/messages', { ...msg, max_tokens: undefined }, ANTHROPIC);
    expect(((await noMax.json()) as Json).error.message).toMatch(/max_tokens/);
    const badJson = await post('/v1/messages', '{', ANTHROPIC);
    expect(await badJson.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
  });
});

describe('Gemini', () => {
  const base = '/v1beta/models/gemini-2.0-flash';
  const req = {
    systemInstruction: { parts: [{ text: 'Be brief.' }] },
    contents: [{ role: 'user', parts: [{ text: 'Why is the sky blue?' }] }],
  };
  const answer = fakeAnswer('Why is the sky blue?');
  const tools = [
    {
      functionDeclarations: [
        {
          name: 'lookup',
          parameters: { type: 'OBJECT', properties: { q: { type: 'STRING' } }, required: ['q'] },
        },
      ],
    },
  ];

  it('generates content', async () => {
    const body = (await (await post(`${base}:generateContent`, req, GEMINI)).json()) as Json;
    expect(body.candidates[0]).toMatchObject({
      content: { role: 'model', parts: [{ text: answer }] },
      finishReason: 'STOP',
    });
    expect(body.usageMetadata).toMatchObject({
      promptTokenCount: Math.ceil(29 / 4),
      candidatesTokenCount: countTokens(answer),
    });
    expect(body.modelVersion).toBe('gemini-2.0-flash');
  });

  it('streams SSE with alt=sse and a JSON array without', async () => {
    const res = await post(`${base}:streamGenerateContent?alt=sse`, req, GEMINI);
    expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
    const stream = await readEvents(res);
    expect(stream.raw).toContain('\r\n\r\n');
    const chunks = jsonEvents(stream);
    expect(chunks.map((c) => c.candidates[0].content.parts[0].text).join('')).toBe(answer);
    expect(chunks.at(-1)?.candidates[0].finishReason).toBe('STOP');
    expect(chunks.at(-1)?.usageMetadata.candidatesTokenCount).toBe(countTokens(answer));

    const arr = (await (await post(`${base}:streamGenerateContent?key=abc`, req, {})).json()) as Json[];
    expect(arr.map((c) => c.candidates[0].content.parts[0].text).join('')).toBe(answer);
  });

  it('calls functions and answers after a functionResponse', async () => {
    const body = (await (await post(`${base}:generateContent`, { ...req, tools }, GEMINI)).json()) as Json;
    expect(body.candidates[0].content.parts[0]).toEqual({
      functionCall: { name: 'lookup', args: { q: 'fake' } },
    });
    const after = await post(
      `${base}:generateContent`,
      {
        ...req,
        tools,
        contents: [
          ...req.contents,
          { role: 'model', parts: [{ functionCall: { name: 'lookup', args: { q: 'fake' } } }] },
          {
            role: 'user',
            parts: [{ functionResponse: { name: 'lookup', response: { result: 'rayleigh' } } }],
          },
        ],
      },
      GEMINI,
    );
    expect(((await after.json()) as Json).candidates[0].content.parts[0].text).toBe(answer);
  });

  it('embeds single and batched', async () => {
    const one = (await (
      await post(
        '/v1beta/models/text-embedding-004:embedContent',
        { content: { parts: [{ text: 'hi' }] } },
        GEMINI,
      )
    ).json()) as Json;
    expect(one.embedding.values).toEqual(fakeEmbedding('hi'));
    const batch = (await (
      await post(
        '/v1beta/models/text-embedding-004:batchEmbedContents',
        {
          requests: [
            {
              model: 'models/text-embedding-004',
              content: { parts: [{ text: 'a' }] },
              outputDimensionality: 4,
            },
          ],
        },
        GEMINI,
      )
    ).json()) as Json;
    expect(batch.embeddings[0].values).toEqual(fakeEmbedding('a', 4));
  });

  it('speaks its own errors', async () => {
    const noKey = await post(`${base}:generateContent`, req, {});
    expect(noKey.status).toBe(403);
    expect(((await noKey.json()) as Json).error).toMatchObject({ code: 403, status: 'PERMISSION_DENIED' });
    const badRole = await post(
      `${base}:generateContent`,
      { contents: [{ role: 'assistant', parts: [{ text: 'x' }] }] },
      GEMINI,
    );
    expect(((await badRole.json()) as Json).error.status).toBe('INVALID_ARGUMENT');
  });
});

describe('output caps', () => {
  const question = 'What is the capital of France?';
  const answer = fakeAnswer(question);
  const chat = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: question }] };
  const argsJson = JSON.stringify(WEATHER_ARGS); // 49 characters, 13 tokens

  it('cuts at 4 characters a token, never through a surrogate pair', () => {
    expect(cutToCap('abcdefghij', 2)).toEqual({ text: 'abcdefgh', cut: true });
    expect(cutToCap('abcdefgh', 2)).toEqual({ text: 'abcdefgh', cut: false });
    expect(cutToCap('abcdefgh', undefined)).toEqual({ text: 'abcdefgh', cut: false });
    const cut = cutToCap('abc😀def', 1);
    expect(cut).toEqual({ text: 'abc', cut: true });
    expect(countTokens(cut.text)).toBe(1);
  });

  it('OpenAI chat: max_tokens cuts the answer with finish_reason length, whole and streamed', async () => {
    const body = (await (await post('/v1/chat/completions', { ...chat, max_tokens: 5 })).json()) as Json;
    expect(body.choices[0]).toMatchObject({
      finish_reason: 'length',
      message: { content: answer.slice(0, 20) },
    });
    expect(body.usage.completion_tokens).toBe(5);
    // max_completion_tokens wins over max_tokens; a cap the answer fits changes nothing.
    const newer = { ...chat, max_tokens: 5, max_completion_tokens: 3 };
    const three = (await (await post('/v1/chat/completions', newer)).json()) as Json;
    expect(three.choices[0].message.content).toBe(answer.slice(0, 12));
    expect(three.usage.completion_tokens).toBe(3);
    const roomy = { ...chat, max_tokens: countTokens(answer) };
    const fits = (await (await post('/v1/chat/completions', roomy)).json()) as Json;
    expect(fits.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: answer } });

    const stream = await readEvents(
      await post('/v1/chat/completions', {
        ...chat,
        max_tokens: 5,
        stream: true,
        stream_options: { include_usage: true },
      }),
    );
    expect(openaiText(stream)).toBe(answer.slice(0, 20));
    const chunks = jsonEvents(stream);
    expect(chunks.at(-2)?.choices[0].finish_reason).toBe('length');
    expect(chunks.at(-1)?.usage.completion_tokens).toBe(5);
  });

  it('OpenAI chat: a cut tool call has its arguments cut mid-JSON, finish_reason length', async () => {
    const req = { ...chat, tools: [WEATHER_TOOL], max_tokens: 6 };
    const body = (await (await post('/v1/chat/completions', req)).json()) as Json;
    expect(body.choices[0].finish_reason).toBe('length');
    expect(body.choices[0].message.tool_calls[0].function.arguments).toBe(argsJson.slice(0, 24));
    expect(body.usage.completion_tokens).toBe(6);
    const stream = jsonEvents(await readEvents(await post('/v1/chat/completions', { ...req, stream: true })));
    const args = stream.map((c) => c.choices[0]?.delta?.tool_calls?.[0]?.function?.arguments ?? '').join('');
    expect(args).toBe(argsJson.slice(0, 24));
    expect(stream.at(-1)?.choices[0].finish_reason).toBe('length');
  });

  it('OpenAI legacy completions: 16 tokens when max_tokens is not set, finish_reason length', async () => {
    const prompt = 'Say hi';
    const full = fakeAnswer(prompt); // 68 characters: past the default 16 tokens
    const plain = (await (await post('/v1/completions', { model: 'm', prompt })).json()) as Json;
    expect(plain.choices[0]).toMatchObject({ text: full.slice(0, 64), finish_reason: 'length' });
    expect(plain.usage.completion_tokens).toBe(16);
    const capped = (await (
      await post('/v1/completions', { model: 'm', prompt, max_tokens: 2 })
    ).json()) as Json;
    expect(capped.choices[0]).toMatchObject({ text: full.slice(0, 8), finish_reason: 'length' });
    const stream = jsonEvents(
      await readEvents(
        await post('/v1/completions', {
          model: 'm',
          prompt,
          max_tokens: 2,
          stream: true,
          stream_options: { include_usage: true },
        }),
      ),
    );
    expect(stream.map((c) => c.choices[0]?.text ?? '').join('')).toBe(full.slice(0, 8));
    expect(stream.at(-2)?.choices[0].finish_reason).toBe('length');
    expect(stream.at(-1)?.usage.completion_tokens).toBe(2);
  });

  it('Anthropic: max_tokens gives stop_reason max_tokens and output_tokens = the cap, whole and streamed', async () => {
    const msg = { model: 'claude-sonnet-4', max_tokens: 4, messages: [{ role: 'user', content: question }] };
    const body = (await (await post('/v1/messages', msg, ANTHROPIC)).json()) as Json;
    expect(body.stop_reason).toBe('max_tokens');
    expect(body.content).toEqual([{ type: 'text', text: answer.slice(0, 16) }]);
    expect(body.usage.output_tokens).toBe(4);
    const stream = await readEvents(await post('/v1/messages', { ...msg, stream: true }, ANTHROPIC));
    const parsed = stream.events.map((e) => JSON.parse(e.data) as Json);
    const text = parsed.map((p) => (p.delta?.type === 'text_delta' ? p.delta.text : '')).join('');
    expect(text).toBe(answer.slice(0, 16));
    expect(parsed.find((p) => p.type === 'message_delta')).toMatchObject({
      delta: { stop_reason: 'max_tokens' },
      usage: { output_tokens: 4 },
    });
    // The cap counts generated tokens: a prefill is not part of it.
    const prefill = 'Fake answer to: What';
    const cont = (await (
      await post(
        '/v1/messages',
        { ...msg, messages: [...msg.messages, { role: 'assistant', content: prefill }] },
        ANTHROPIC,
      )
    ).json()) as Json;
    expect(cont.content[0].text).toBe(answer.slice(prefill.length, prefill.length + 16));
  });

  it('Anthropic: a cut tool_use keeps the arguments finished before the cap; streamed, the cut JSON', async () => {
    const msg = {
      model: 'claude-sonnet-4',
      max_tokens: 6,
      messages: [{ role: 'user', content: question }],
      tools: [{ name: 'get_weather', input_schema: WEATHER_TOOL.function.parameters }],
    };
    const body = (await (await post('/v1/messages', msg, ANTHROPIC)).json()) as Json;
    expect(body.stop_reason).toBe('max_tokens');
    // '{"city":"fake","days":1,' is 24 characters: city and days are whole, the rest is not.
    expect(body.content[0]).toMatchObject({ type: 'tool_use', input: { city: 'fake', days: 1 } });
    expect(body.usage.output_tokens).toBe(6);
    const stream = await readEvents(await post('/v1/messages', { ...msg, stream: true }, ANTHROPIC));
    const parsed = stream.events.map((e) => JSON.parse(e.data) as Json);
    const json = parsed
      .map((p) => (p.delta?.type === 'input_json_delta' ? p.delta.partial_json : ''))
      .join('');
    expect(json).toBe(argsJson.slice(0, 24));
    expect(parsed.find((p) => p.type === 'message_delta')?.delta.stop_reason).toBe('max_tokens');
  });

  it('Gemini: generationConfig.maxOutputTokens gives finishReason MAX_TOKENS, whole and streamed', async () => {
    const base = '/v1beta/models/gemini-2.0-flash';
    const req = {
      contents: [{ role: 'user', parts: [{ text: question }] }],
      generationConfig: { maxOutputTokens: 5 },
    };
    const body = (await (await post(`${base}:generateContent`, req, GEMINI)).json()) as Json;
    expect(body.candidates[0]).toMatchObject({
      content: { parts: [{ text: answer.slice(0, 20) }] },
      finishReason: 'MAX_TOKENS',
    });
    expect(body.usageMetadata.candidatesTokenCount).toBe(5);
    const snake = { ...req, generationConfig: undefined, generation_config: { max_output_tokens: 5 } };
    const viaSnake = (await (await post(`${base}:generateContent`, snake, GEMINI)).json()) as Json;
    expect(viaSnake.candidates[0].finishReason).toBe('MAX_TOKENS');
    const chunks = jsonEvents(
      await readEvents(await post(`${base}:streamGenerateContent?alt=sse`, req, GEMINI)),
    );
    expect(chunks.map((c) => c.candidates[0].content.parts[0].text).join('')).toBe(answer.slice(0, 20));
    expect(chunks.at(-1)?.candidates[0].finishReason).toBe('MAX_TOKENS');
    expect(chunks.at(-1)?.usageMetadata.candidatesTokenCount).toBe(5);
    const tools = [
      { functionDeclarations: [{ name: 'get_weather', parameters: WEATHER_TOOL.function.parameters }] },
    ];
    const call = (await (
      await post(
        `${base}:generateContent`,
        { ...req, tools, generationConfig: { maxOutputTokens: 6 } },
        GEMINI,
      )
    ).json()) as Json;
    expect(call.candidates[0]).toMatchObject({
      content: { parts: [{ functionCall: { name: 'get_weather', args: { city: 'fake', days: 1 } } }] },
      finishReason: 'MAX_TOKENS',
    });
  });
});

describe('faults', () => {
  const chat = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'one two three four' }] };
  const streamChat = { ...chat, stream: true, stream_options: { include_usage: true } };

  it('answers a status in each provider format, with retry-after, only `times` times', async () => {
    fp.setFaults([{ times: 1, fault: { type: 'status', status: 429, retryAfterSeconds: 7 } }]);
    const limited = await post('/v1/chat/completions', chat);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('7');
    expect(((await limited.json()) as Json).error.code).toBe('rate_limit_exceeded');
    expect((await post('/v1/chat/completions', chat)).status).toBe(200);

    fp.setFaults([{ fault: { type: 'status', status: 529 } }]);
    const overloaded = await post(
      '/v1/messages',
      { model: 'c', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] },
      ANTHROPIC,
    );
    expect(overloaded.status).toBe(529);
    expect(((await overloaded.json()) as Json).error.type).toBe('overloaded_error');

    fp.setFaults([{ fault: { type: 'status', status: 429, retryAfterSeconds: 3 } }]);
    const gem = await post(
      '/v1beta/models/g:generateContent',
      { contents: [{ parts: [{ text: 'x' }] }] },
      GEMINI,
    );
    expect(((await gem.json()) as Json).error).toMatchObject({
      status: 'RESOURCE_EXHAUSTED',
      details: [{ retryDelay: '3s' }],
    });

    fp.setFaults([{ fault: { type: 'status', status: 400, code: 'content_policy' } }]);
    expect(((await (await post('/v1/chat/completions', chat)).json()) as Json).error.code).toBe(
      'content_filter',
    );
    fp.setFaults([{ fault: { type: 'status', status: 400, code: 'context_length_exceeded' } }]);
    expect(((await (await post('/v1/chat/completions', chat)).json()) as Json).error.code).toBe(
      'context_length_exceeded',
    );
  });

  it("says whether a token-rate 429 is the request's size or the window's load, in OpenAI's words", async () => {
    fp.setFaults([{ fault: { type: 'status', status: 429, tokens: { limit: 30000, requested: 50000 } } }]);
    const big = (await (await post('/v1/chat/completions', chat)).json()) as Json;
    expect(big.error).toMatchObject({ type: 'tokens', code: 'rate_limit_exceeded', param: null });
    expect(big.error.message).toMatch(
      /^Request too large for gpt-4o-mini .*: Limit 30000, Requested 50000\./,
    );
    fp.setFaults([
      { fault: { type: 'status', status: 429, tokens: { limit: 30000, requested: 2000, used: 29000 } } },
    ]);
    const load = (await (await post('/v1/chat/completions', chat)).json()) as Json;
    expect(load.error.message).toMatch(/^Rate limit reached .*: Limit 30000, Used 29000, Requested 2000\./);
  });

  it('names an object the request refers to that the provider will not read, in each format', async () => {
    fp.setFaults([{ fault: { type: 'status', status: 404, missing: 'file-x1', param: 'file_id' } }]);
    const openai = (await (await post('/v1/chat/completions', chat)).json()) as Json;
    expect(openai.error).toMatchObject({ message: 'No such File object: file-x1', param: 'file_id' });
    const msg = { model: 'c', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] };
    const anthropic = await post('/v1/messages', msg, ANTHROPIC);
    expect(((await anthropic.json()) as Json).error).toEqual({
      type: 'not_found_error',
      message: 'File not found: file-x1',
    });
    fp.setFaults([{ fault: { type: 'status', status: 403, missing: 'abc-123' } }]);
    const gem = await post(
      '/v1beta/models/g:generateContent',
      { contents: [{ parts: [{ text: 'x' }] }] },
      GEMINI,
    );
    expect(gem.status).toBe(403);
    expect(((await gem.json()) as Json).error).toEqual({
      code: 403,
      status: 'PERMISSION_DENIED',
      message: 'You do not have permission to access the File abc-123 or it may not exist.',
    });
  });

  it('matches on model, path and stream', async () => {
    fp.setFaults([
      { match: { model: 'gpt-4o', stream: true }, fault: { type: 'status', status: 500 } },
      { match: { path: '/embeddings' }, fault: { type: 'status', status: 503 } },
    ]);
    expect((await post('/v1/chat/completions', { ...chat, model: 'gpt-4o' })).status).toBe(200);
    expect((await post('/v1/chat/completions', { ...chat, model: 'gpt-4o', stream: true })).status).toBe(500);
    expect((await post('/v1/embeddings', { model: 'e', input: 'x' })).status).toBe(503);
  });

  it('hangs until the client gives up, delays, and resets', async () => {
    fp.setFaults([{ times: 1, fault: { type: 'hang' } }]);
    await expect(post('/v1/chat/completions', chat, OPENAI, AbortSignal.timeout(200))).rejects.toThrow();
    fp.setFaults([{ times: 1, fault: { type: 'delay', ms: 150 } }]);
    const t0 = Date.now();
    expect((await post('/v1/chat/completions', chat)).status).toBe(200);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
    fp.setFaults([{ times: 1, fault: { type: 'reset' } }]);
    await expect(post('/v1/chat/completions', chat)).rejects.toThrow();
    expect((await post('/v1/chat/completions', chat)).status).toBe(200);
  });

  it('holds an answer until the test releases it', async () => {
    fp.setFaults([{ times: 1, fault: { type: 'hold' } }]);
    const seen = fp.requests.length;
    const answer = post('/v1/chat/completions', chat);
    await vi.waitFor(() => expect(fp.requests.length).toBe(seen + 1));
    expect(fp.releaseHeld()).toBe(1);
    expect((await answer).status).toBe(200);
    expect(fp.releaseHeld()).toBe(0);
  });

  it('reset() lets go of an exchange an earlier test left held: a later releaseHeld() sees none', async () => {
    fp.setFaults([{ times: 1, fault: { type: 'hold' } }]);
    const seen = fp.requests.length;
    const abort = new AbortController();
    const left = post('/v1/chat/completions', chat, OPENAI, abort.signal).catch(() => undefined);
    await vi.waitFor(() => expect(fp.requests.length).toBe(seen + 1));
    fp.reset();
    const released = fp.releaseHeld();
    abort.abort();
    await left;
    expect(released).toBe(0);
  });

  it('an exchange whose client left before its hold was reached is never held', async () => {
    const held: Held = new Set();
    const gone = untilReleased(held, AbortSignal.abort());
    expect(held.size).toBe(0);
    await expect(gone).resolves.toBe(false);
    const closed = new AbortController();
    const waiting = untilReleased(held, closed.signal);
    expect(held.size).toBe(1);
    closed.abort();
    await expect(waiting).resolves.toBe(false);
    expect(held.size).toBe(0);
  });

  it('slows a stream down', async () => {
    fp.setFaults([{ fault: { type: 'slow-stream', chunkDelayMs: 20, firstChunkDelayMs: 100 } }]);
    const t0 = Date.now();
    const stream = await readEvents(await post('/v1/chat/completions', streamChat));
    expect(stream.end).toBe('done');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(100 + 20 * (stream.events.length - 1) - 10);
  });

  it('stalls and breaks after N content chunks', async () => {
    fp.setFaults([{ times: 1, fault: { type: 'stall-stream', afterChunks: 2 } }]);
    const stalled = await readEvents(await post('/v1/chat/completions', streamChat), 300);
    expect(stalled.end).toBe('idle');
    expect(openaiText(stalled)).toBe('Fake answer');

    fp.setFaults([{ times: 1, fault: { type: 'break-stream', afterChunks: 3 } }]);
    const broken = await readEvents(
      await post(
        '/v1/messages',
        { model: 'c', max_tokens: 5, stream: true, messages: [{ role: 'user', content: 'x' }] },
        ANTHROPIC,
      ),
    );
    expect(broken.end).toBe('error');
    expect(broken.events.filter((e) => e.event === 'content_block_delta')).toHaveLength(3);
  });

  it('omits the end marker, optionally holding the socket', async () => {
    fp.setFaults([{ times: 1, fault: { type: 'no-done' } }]);
    const ended = await readEvents(await post('/v1/chat/completions', streamChat));
    expect(ended.end).toBe('done');
    expect(ended.events.some((e) => e.data === '[DONE]')).toBe(false);
    expect(jsonEvents(ended).at(-1)?.usage).toBeDefined();

    fp.setFaults([{ times: 1, fault: { type: 'no-done', keepOpen: true } }]);
    const held = await readEvents(
      await post(
        '/v1/messages',
        { model: 'c', max_tokens: 5, stream: true, messages: [{ role: 'user', content: 'x' }] },
        ANTHROPIC,
      ),
      300,
    );
    expect(held.end).toBe('idle');
    expect(held.events.at(-1)?.event).toBe('message_delta');
  });

  it('inserts one malformed chunk', async () => {
    fp.setFaults([{ times: 1, fault: { type: 'malformed-chunk', atChunk: 1 } }]);
    const stream = await readEvents(await post('/v1/chat/completions', streamChat));
    const bad = stream.events.filter((e) => {
      try {
        JSON.parse(e.data === '[DONE]' ? '{}' : e.data);
        return false;
      } catch {
        return true;
      }
    });
    expect(bad).toHaveLength(1);
    expect(stream.events.indexOf(bad[0]!)).toBe(2); // role chunk, first word, garbage
    expect(stream.events.at(-1)?.data).toBe('[DONE]');
  });

  it('drops usage everywhere', async () => {
    fp.setFaults([{ fault: { type: 'no-usage' } }]);
    expect(((await (await post('/v1/chat/completions', chat)).json()) as Json).usage).toBeUndefined();
    const stream = await readEvents(await post('/v1/chat/completions', streamChat));
    expect(jsonEvents(stream).some((c) => c.usage)).toBe(false);
    const anth = await readEvents(
      await post(
        '/v1/messages',
        { model: 'c', max_tokens: 5, stream: true, messages: [{ role: 'user', content: 'x' }] },
        ANTHROPIC,
      ),
    );
    expect(
      anth.events.some(
        (e) => (JSON.parse(e.data) as Json).usage || (JSON.parse(e.data) as Json).message?.usage,
      ),
    ).toBe(false);
  });

  it('sends an in-stream error event', async () => {
    fp.setFaults([{ fault: { type: 'stream-error', afterChunks: 1, status: 529 } }]);
    const stream = await readEvents(
      await post(
        '/v1/messages',
        { model: 'c', max_tokens: 5, stream: true, messages: [{ role: 'user', content: 'x' }] },
        ANTHROPIC,
      ),
    );
    expect(stream.end).toBe('done');
    expect(stream.events.at(-1)).toMatchObject({ event: 'error' });
    expect((JSON.parse(stream.events.at(-1)!.data) as Json).error.type).toBe('overloaded_error');
  });

  it('ignores stream faults on non-stream requests', async () => {
    fp.setFaults([{ times: 1, fault: { type: 'break-stream', afterChunks: 0 } }]);
    expect((await post('/v1/chat/completions', chat)).status).toBe(200);
    const broken = await readEvents(await post('/v1/chat/completions', streamChat));
    expect(broken.end).toBe('error');
  });

  it('takes faults and resets over HTTP', async () => {
    const set = await post('/_fake/faults', [{ fault: { type: 'status', status: 502 } }], {});
    expect(set.status).toBe(200);
    expect((await post('/v1/chat/completions', chat)).status).toBe(502);
    expect((await post('/_fake/reset', {}, {})).status).toBe(200);
    expect((await post('/v1/chat/completions', chat)).status).toBe(200);
    expect(fp.requests).toHaveLength(1);
    expect((await post('/_fake/faults', { not: 'an array' }, {})).status).toBe(400);
  });
});

describe('server lifecycle', () => {
  it('applies base latency and closes with a hung request pending', async () => {
    const slow = await startFakeProvider({ latencyMs: 80 });
    const t0 = Date.now();
    const res = await fetch(`${slow.url}/v1/models`, { headers: OPENAI });
    expect(res.status).toBe(200);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(75);
    slow.setFaults([{ fault: { type: 'hang' } }]);
    const pending = fetch(`${slow.url}/v1/models`, { headers: OPENAI }).catch(() => 'failed');
    // Closes once the hung request has arrived, not after a guessed delay.
    await vi.waitFor(() => expect(slow.requests).toHaveLength(2), { timeout: 10_000, interval: 5 });
    await slow.close();
    expect(await pending).toBe('failed');
  });
});
