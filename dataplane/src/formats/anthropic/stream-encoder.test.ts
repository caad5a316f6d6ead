import { readFileSync } from 'node:fs';
import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { AnthropicStreamTranslator } from '../../providers/anthropic/stream.ts';
import type { ChatChunk, ChunkChoice } from '../openai/types.ts';
import { SseParser, type SseEvent } from '../sse.ts';
import { AnthropicStreamEncoder } from './index.ts';

const chunk = (
  delta: ChunkChoice['delta'] & Record<string, unknown>,
  finish: ChunkChoice['finish_reason'] = null,
): ChatChunk => ({
  id: 'chatcmpl-abc',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'gpt-x',
  choices: [{ index: 0, delta, finish_reason: finish }],
});
const usageChunk: ChatChunk = {
  id: 'chatcmpl-abc',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'gpt-x',
  choices: [],
  usage: {
    prompt_tokens: 30,
    completion_tokens: 12,
    total_tokens: 42,
    prompt_tokens_details: { cached_tokens: 10 },
  },
};

/** An OpenAI-style stream: reasoning, text, two tool calls, finish chunk, usage chunk. */
const openAiStyle: ChatChunk[] = [
  chunk({ role: 'assistant', content: '' }),
  chunk({ reasoning_content: 'Think ' }),
  chunk({ reasoning_content: 'first.' }),
  chunk({ content: 'Calling ' }),
  chunk({ content: 'tools.' }),
  chunk({
    tool_calls: [
      { index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } },
    ],
  }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
  chunk({
    tool_calls: [
      { index: 1, id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '{}' } },
    ],
  }),
  chunk({}, 'tool_calls'),
  usageChunk,
];

function encode(chunks: ChatChunk[], inputTokens?: number): string {
  const encoder = new AnthropicStreamEncoder({ id: 'chatcmpl-abc', model: 'claude-sonnet-4-5', inputTokens });
  return chunks.map((c) => encoder.push(c)).join('') + encoder.finish();
}

function events(sse: string): SseEvent[] {
  const parser = new SseParser();
  return [...parser.push(sse), ...parser.end()];
}

/** Anthropic's documented grammar: start, (block start, deltas, block stop)*, message_delta, stop. */
function assertGrammar(sse: string): void {
  const list = events(sse);
  const types = list.map((e) => {
    const data = JSON.parse(e.data) as { type: string };
    expect(e.event).toBe(data.type);
    return data;
  });
  expect(types[0]?.type).toBe('message_start');
  expect(types.at(-2)?.type).toBe('message_delta');
  expect(types.at(-1)?.type).toBe('message_stop');
  let open: number | undefined;
  let next = 0;
  for (const event of types.slice(1, -2) as { type: string; index: number }[]) {
    if (event.type === 'content_block_start') {
      expect(open).toBeUndefined();
      expect(event.index).toBe(next++);
      open = event.index;
    } else if (event.type === 'content_block_delta') {
      expect(event.index).toBe(open);
    } else {
      expect(event.type).toBe('content_block_stop');
      expect(event.index).toBe(open);
      open = undefined;
    }
  }
  expect(open).toBeUndefined();
}

/** The Anthropic SDK, pointed at a fetch that answers with our SSE text. */
function sdkFor(sse: string, status = 200): Anthropic {
  return new Anthropic({
    apiKey: 'test',
    baseURL: 'http://gantry.test',
    maxRetries: 0,
    fetch: async () => new Response(sse, { status, headers: { 'content-type': 'text/event-stream' } }),
  });
}
const params = { model: 'test-model', max_tokens: 100, messages: [{ role: 'user' as const, content: 'hi' }] };

describe('AnthropicStreamEncoder', () => {
  it('follows the Anthropic event grammar', () => {
    assertGrammar(encode(openAiStyle, 20));
  });

  it('is parsed by the Anthropic SDK into the expected message', async () => {
    const message = await sdkFor(encode(openAiStyle, 20)).messages.stream(params).finalMessage();
    expect(message.id).toBe('msg_abc');
    expect(message.model).toBe('claude-sonnet-4-5');
    expect(message.stop_reason).toBe('tool_use');
    expect(message.content).toEqual([
      { type: 'thinking', thinking: 'Think first.', signature: '' },
      { type: 'text', text: 'Calling tools.' },
      { type: 'tool_use', id: 'call_a', name: 'get_weather', input: { city: 'Paris' } },
      { type: 'tool_use', id: 'call_b', name: 'get_time', input: {} },
    ]);
    // message_delta carries the final counts (Anthropic's input_tokens excludes cache reads).
    expect(message.usage).toMatchObject({ input_tokens: 20, output_tokens: 12, cache_read_input_tokens: 10 });
  });

  it('maps finish reasons and ends an empty stream cleanly', async () => {
    const sse = encode([chunk({ content: 'cut' }), chunk({}, 'length')]);
    assertGrammar(sse);
    expect((await sdkFor(sse).messages.stream(params).finalMessage()).stop_reason).toBe('max_tokens');
    const empty = new AnthropicStreamEncoder({ id: 'x', model: 'm' }).finish();
    assertGrammar(empty);
    expect(events(empty).map((e) => e.event)).toEqual(['message_start', 'message_delta', 'message_stop']);
  });

  it('produces an error event the SDK raises as an API error', async () => {
    const encoder = new AnthropicStreamEncoder({ id: 'x', model: 'm' });
    const sse =
      encoder.push(chunk({ content: 'par' })) + encoder.error('upstream_timeout', 'Upstream timed out', 504);
    expect(encoder.finish()).toBe('');
    expect(events(sse).at(-1)).toEqual({
      event: 'error',
      data: JSON.stringify({
        type: 'error',
        error: { type: 'timeout_error', message: 'Upstream timed out' },
      }),
    });
    await expect(sdkFor(sse).messages.stream(params).finalMessage()).rejects.toThrow(/Upstream timed out/);
    expect(new AnthropicStreamEncoder({ id: 'x', model: 'm' }).error('internal_error', 'oops')).toContain(
      '"type":"api_error"',
    );
    expect(new AnthropicStreamEncoder({ id: 'x', model: 'm' }).error('overloaded_error', 'busy')).toContain(
      '"type":"overloaded_error"',
    );
  });
});

describe('Anthropic SSE → translator → encoder → Anthropic SDK', () => {
  it('reproduces the upstream message, thinking signature included', async () => {
    const text = readFileSync(
      new URL('../../providers/anthropic/fixtures/thinking-tool-use.sse', import.meta.url),
      'utf8',
    );
    const translator = new AnthropicStreamTranslator({
      id: 'msg_01Fx7wQeHb3kVdJtLzN2rP8a',
      created: 1,
      model: 'claude-sonnet-4-5',
    });
    const encoder = new AnthropicStreamEncoder({
      id: 'msg_01Fx7wQeHb3kVdJtLzN2rP8a',
      model: 'claude-sonnet-4-5',
    });
    const parser = new SseParser();
    let sse = '';
    for (const event of [...parser.push(text), ...parser.end()])
      for (const c of translator.push(event)) sse += encoder.push(c);
    sse += encoder.finish();
    assertGrammar(sse);
    const message = await sdkFor(sse).messages.stream(params).finalMessage();
    expect(message.content).toEqual([
      {
        type: 'thinking',
        thinking: 'The user wants the weather in Paris. I should call get_weather.',
        signature: 'EqQBCkYIAxgCIkAsig==',
      },
      { type: 'text', text: 'Let me check the weather.' },
      {
        type: 'tool_use',
        id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6',
        name: 'get_weather',
        input: { city: 'Paris', unit: 'c' },
      },
      {
        type: 'tool_use',
        id: 'toolu_01PQm2vVnXo8bB3h5S1cKx9d',
        name: 'get_time',
        input: { tz: 'Europe/Paris' },
      },
    ]);
    expect(message.stop_reason).toBe('tool_use');
    expect(message.usage).toMatchObject({
      input_tokens: 472,
      output_tokens: 89,
      cache_read_input_tokens: 128,
    });
  });
});
