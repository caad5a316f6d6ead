/**
 * What a provider says in a 200 is untrusted input: usage counts that are negative, absurd
 * (1e300 tokens), of the wrong type or missing must not make the gateway charge an absurd,
 * negative or zero amount, lose the usage record or crash; a 200 whose body is malformed is
 * the deployment's fault and is failed over. The upstream here is a raw HTTP server the test
 * scripts, behind real deployments of each provider kind, driven with the openai client.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MAX_REPORTED_TOKENS } from '../../dataplane/src/accounting/reported-usage.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';
import { usageRecord } from '../harness/usage-record.ts';

const KEY = 'sk-test-usage-sanity';
const PRICE = { inputPerMillionTokens: 1, outputPerMillionTokens: 2 };
const SMALL_WINDOW = 8_192;

interface Scripted {
  status?: number;
  contentType?: string;
  body: string;
}
/** What the raw upstream answers next, by provider kind. */
let script: Record<'openai' | 'anthropic' | 'gemini', Scripted>;

let raw: Server;
let stack: Stack;
let client: OpenAI;

const kindOf = (path: string): keyof typeof script =>
  path.includes('/messages') ? 'anthropic' : path.includes(':') ? 'gemini' : 'openai';

beforeAll(async () => {
  raw = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const answer = script[kindOf(req.url ?? '')];
      res.writeHead(answer.status ?? 200, { 'content-type': answer.contentType ?? 'application/json' });
      res.end(answer.body);
    });
  });
  await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
  const rawUrl = `http://127.0.0.1:${(raw.address() as AddressInfo).port}`;
  stack = await startStack(([fake]) => {
    const pair = (model: string, provider: string) => [
      deployment({
        name: `${model}-raw`,
        model,
        provider,
        upstreamModel: model,
        baseUrl: fakeBase(rawUrl, provider),
        priority: 1,
        pricing: PRICE,
      }),
      deployment({
        name: `${model}-fake`,
        model,
        provider,
        upstreamModel: model,
        baseUrl: fakeBase(fake!, provider),
        priority: 2,
        pricing: PRICE,
      }),
    ];
    return [
      deployment({
        name: 'oai-small-raw',
        model: 'oai-small',
        baseUrl: fakeBase(rawUrl),
        pricing: PRICE,
        contextWindow: SMALL_WINDOW,
      }),
      ...pair('oai', 'openai'),
      ...pair('claude', 'anthropic'),
      ...pair('gem', 'gemini'),
      tenant('acme'),
      apiKey('k', KEY, 'acme'),
    ].join('');
  });
  client = new OpenAI({ baseURL: stack.baseURL, apiKey: KEY, maxRetries: 0 });
});
afterAll(async () => {
  await stack.close();
  await new Promise((resolve) => raw.close(resolve));
});
beforeEach(() => {
  stack.gateway.health.reset();
  script = {
    openai: { body: '' },
    anthropic: { body: '' },
    gemini: { body: '' },
  };
});

const anthropicMessage = (usage: unknown) =>
  JSON.stringify({
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'claude',
    content: [{ type: 'text', text: 'a short answer of a few words' }],
    stop_reason: 'end_turn',
    ...(usage !== undefined && { usage }),
  });

const openaiCompletion = (usage: unknown) =>
  JSON.stringify({
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'oai',
    choices: [{ index: 0, message: { role: 'assistant', content: 'a short answer' }, finish_reason: 'stop' }],
    usage,
  });

const sse = (events: [string | undefined, unknown][]) =>
  events
    .map(([event, data]) => `${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`)
    .join('');

/** An Anthropic stream whose usage is only what `start` and `delta` say (undefined: absent). */
const anthropicStream = (start: unknown, delta: unknown) =>
  sse([
    [
      'message_start',
      {
        type: 'message_start',
        message: {
          id: 'msg_1',
          type: 'message',
          role: 'assistant',
          model: 'claude',
          content: [],
          ...(start !== undefined && { usage: start }),
        },
      },
    ],
    [
      'content_block_start',
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    ],
    [
      'content_block_delta',
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'a streamed answer' } },
    ],
    ['content_block_stop', { type: 'content_block_stop', index: 0 }],
    [
      'message_delta',
      {
        type: 'message_delta',
        delta: { stop_reason: 'end_turn' },
        ...(delta !== undefined && { usage: delta }),
      },
    ],
    ['message_stop', { type: 'message_stop' }],
  ]);

const geminiStream = (usageMetadata: unknown) =>
  sse([
    [undefined, { candidates: [{ content: { role: 'model', parts: [{ text: 'a streamed answer' }] } }] }],
    [
      undefined,
      {
        candidates: [{ content: { role: 'model', parts: [{ text: '' }] }, finishReason: 'STOP' }],
        usageMetadata,
      },
    ],
  ]);

/** A charge for a one-line prompt and a few words: well under a cent, never zero or negative. */
function expectSaneCharge(usage: OpenAI.CompletionUsage | undefined, costUsd: number): void {
  expect(usage).toBeDefined();
  for (const n of [usage!.prompt_tokens, usage!.completion_tokens, usage!.total_tokens]) {
    expect(Number.isSafeInteger(n)).toBe(true);
    expect(n).toBeGreaterThan(0);
    expect(n).toBeLessThan(1000);
  }
  expect(usage!.total_tokens).toBe(usage!.prompt_tokens + usage!.completion_tokens);
  expect(costUsd).toBeGreaterThan(0);
  expect(costUsd).toBeLessThan(0.01);
}

async function askJson(model: string) {
  const { data, response } = await client.chat.completions
    .create({ model, messages: [{ role: 'user', content: 'tell me something short' }] })
    .withResponse();
  const cost = Number(response.headers.get('x-gantry-cost'));
  expectSaneCharge(data.usage, cost);
  const record = await usageRecord(stack, 'acme', response.headers.get('x-gantry-request-id'));
  expect(record.costUsd).toBe(cost);
  expect(record.promptTokens).toBe(data.usage!.prompt_tokens);
  expect(record.completionTokens).toBe(data.usage!.completion_tokens);
  return response;
}

async function askStream(model: string) {
  const { data: stream, response } = await client.chat.completions
    .create({
      model,
      messages: [{ role: 'user', content: 'tell me something short' }],
      stream: true,
      stream_options: { include_usage: true },
    })
    .withResponse();
  let usage: OpenAI.CompletionUsage | undefined;
  let text = '';
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    text += chunk.choices[0]?.delta.content ?? '';
  }
  expect(text).toBe('a streamed answer');
  const record = await usageRecord(stack, 'acme', response.headers.get('x-gantry-request-id'));
  expect(record.status).toBe(200);
  expectSaneCharge(usage, record.costUsd);
  expect(record.promptTokens).toBe(usage!.prompt_tokens);
  expect(record.completionTokens).toBe(usage!.completion_tokens);
}

describe('usage a provider reports is believed only when it can be true', () => {
  it.each([
    ['1e300 tokens', { input_tokens: 1e300, output_tokens: 1e300 }],
    ['negative output', { input_tokens: 12, output_tokens: -1_000_000_000 }],
    ['negative input', { input_tokens: -50, output_tokens: 7 }],
    ['just past the bound', { input_tokens: MAX_REPORTED_TOKENS + 1, output_tokens: 7 }],
    ['no usage at all', undefined],
  ])('Anthropic answer with %s: charged on the gateway’s own count', async (_name, usage) => {
    script.anthropic = { body: anthropicMessage(usage) };
    const response = await askJson('claude');
    expect(response.headers.get('x-gantry-provider')).toBe('claude-raw');
  });

  it.each([
    ['1e300 completion tokens', { prompt_tokens: 5, completion_tokens: 1e300, total_tokens: 3 }],
    ['counts as strings and objects', { prompt_tokens: '7', completion_tokens: {} }],
    ['fractional counts', { prompt_tokens: 5.5, completion_tokens: 2 }],
  ])('OpenAI answer with %s: charged on the gateway’s own count', async (_name, usage) => {
    script.openai = { body: openaiCompletion(usage) };
    const response = await askJson('oai');
    expect(response.headers.get('x-gantry-provider')).toBe('oai-raw');
  });

  it.each([
    ['in message_delta only', undefined, { output_tokens: 4 }],
    ['missing everywhere', undefined, undefined],
    ['huge in message_delta', { input_tokens: 12, output_tokens: 1 }, { output_tokens: 1e300 }],
    ['negative in message_delta', { input_tokens: 12, output_tokens: 1 }, { output_tokens: -40 }],
  ])('Anthropic stream with usage %s: a sane charge and record', async (_name, start, delta) => {
    script.anthropic = { contentType: 'text/event-stream', body: anthropicStream(start, delta) };
    await askStream('claude');
  });

  it.each([
    ['1e300 tokens', { promptTokenCount: 1e300, candidatesTokenCount: 1e300, totalTokenCount: 2e300 }],
    ['negative counts', { promptTokenCount: -3, candidatesTokenCount: -9, totalTokenCount: -12 }],
  ])('Gemini stream with %s: a sane charge and record', async (_name, usageMetadata) => {
    script.gemini = { contentType: 'text/event-stream', body: geminiStream(usageMetadata) };
    await askStream('gem');
  });
});

/** A chat answer limited to `max_tokens: 5`: its usage (from the body or the stream) and record. */
async function askBounded(model: string, stream: boolean) {
  const params = {
    model,
    max_tokens: 5,
    messages: [{ role: 'user' as const, content: 'tell me something short' }],
  };
  let usage: OpenAI.CompletionUsage | undefined;
  let requestId: string | null;
  if (stream) {
    const { data, response } = await client.chat.completions
      .create({ ...params, stream: true, stream_options: { include_usage: true } })
      .withResponse();
    for await (const chunk of data) if (chunk.usage) usage = chunk.usage;
    requestId = response.headers.get('x-gantry-request-id');
  } else {
    const { data, response } = await client.chat.completions.create(params).withResponse();
    usage = data.usage;
    requestId = response.headers.get('x-gantry-request-id');
  }
  const record = await usageRecord(stack, 'acme', requestId);
  expect(record.status).toBe(200);
  expect(record.promptTokens).toBe(usage!.prompt_tokens);
  expect(record.completionTokens).toBe(usage!.completion_tokens);
  return { usage: usage!, costUsd: record.costUsd };
}

describe('usage a provider reports is held against the request it answers', () => {
  it.each([false, true])(
    'an output count above max_tokens is billed as max_tokens, not as reported (stream: %s)',
    async (stream) => {
      if (stream)
        script.anthropic = {
          contentType: 'text/event-stream',
          body: anthropicStream({ input_tokens: 12, output_tokens: 1 }, { output_tokens: 1_000_000_000 }),
        };
      else script.openai = { body: openaiCompletion({ prompt_tokens: 9, completion_tokens: 1_000_000_000 }) };
      const { usage, costUsd } = await askBounded(stream ? 'claude' : 'oai', stream);
      expect(usage.completion_tokens).toBe(5);
      expect(costUsd).toBeLessThan(0.01);
    },
  );

  it.each([
    ['0 prompt and 0 output tokens for a prompt and an answer', { prompt_tokens: 0, completion_tokens: 0 }],
    ['no output count at all', { prompt_tokens: 9, total_tokens: 9 }],
  ])('OpenAI answer reporting %s: charged on the gateway’s own count', async (_name, reported) => {
    script.openai = { body: openaiCompletion(reported) };
    const response = await askJson('oai');
    expect(response.headers.get('x-gantry-provider')).toBe('oai-raw');
  });

  it('a prompt count beyond the deployment’s context window is billed as the window', async () => {
    script.openai = { body: openaiCompletion({ prompt_tokens: 900_000_000, completion_tokens: 3 }) };
    const { data, response } = await client.chat.completions
      .create({ model: 'oai-small', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    expect(response.headers.get('x-gantry-provider')).toBe('oai-small-raw');
    expect(data.usage?.prompt_tokens).toBe(SMALL_WINDOW);
  });
});

describe('a 200 with a malformed body is the deployment’s fault', () => {
  it.each([
    ['openai', 'oai', '{"choices":[{}]}'],
    ['openai', 'oai', '{"choices":[null]}'],
    ['openai', 'oai', '{"choices":[]}'],
    ['anthropic', 'claude', '{"type":"message"}'],
    ['gemini', 'gem', '{"candidates":[]}'],
  ] as const)('%s %s: failed over to the next deployment', async (kind, model, body) => {
    script[kind] = { body };
    const response = await askJson(model);
    expect(response.headers.get('x-gantry-provider')).toBe(`${model}-fake`);
    expect(response.headers.get('x-gantry-failed')).toBe(`${model}-raw`);
  });
});
