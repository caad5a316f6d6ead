import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors.ts';
import { anthropicAdapter } from './index.ts';
import { classifyAnthropicError, retryAfterMs } from './errors.ts';
import { finishReason, toChatCompletion } from './response.ts';

const message = {
  id: 'msg_01XFDUDYJgAACzvnptvVoYEL',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5-20250929',
  content: [
    { type: 'thinking', thinking: 'Paris is in France.', signature: 'EqQBsig' },
    { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va' },
    { type: 'text', text: 'I will check ', citations: null },
    { type: 'text', text: 'the weather.' },
    { type: 'tool_use', id: 'toolu_01A09q90qw90lq917835lq9', name: 'get_weather', input: { city: 'Paris' } },
  ],
  stop_reason: 'tool_use',
  stop_sequence: null,
  usage: {
    input_tokens: 100,
    cache_creation_input_tokens: 20,
    cache_read_input_tokens: 300,
    output_tokens: 50,
  },
};

describe('anthropic response → chat.completion', () => {
  it('maps content blocks, stop reason and usage', () => {
    const out = toChatCompletion(message, () => 1_700_000_000_000);
    expect(out).toEqual({
      id: 'msg_01XFDUDYJgAACzvnptvVoYEL',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'claude-sonnet-4-5-20250929',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: 'I will check the weather.',
            reasoning_content: 'Paris is in France.',
            thinking_blocks: [
              { type: 'thinking', thinking: 'Paris is in France.', signature: 'EqQBsig' },
              { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va' },
            ],
            tool_calls: [
              {
                id: 'toolu_01A09q90qw90lq917835lq9',
                type: 'function',
                function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
              },
            ],
          },
          finish_reason: 'tool_calls',
        },
      ],
      // prompt_tokens includes cache reads and writes, as OpenAI's does.
      usage: {
        prompt_tokens: 420,
        completion_tokens: 50,
        total_tokens: 470,
        prompt_tokens_details: { cached_tokens: 300 },
      },
    });
  });

  it('gives null content when there is no text', () => {
    const out = anthropicAdapter.chat.response({ ...message, content: [message.content[4]] }, {} as never);
    expect(out.choices[0]?.message.content).toBeNull();
  });

  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['max_tokens', 'length'],
    ['tool_use', 'tool_calls'],
    ['refusal', 'content_filter'],
    ['model_context_window_exceeded', 'length'],
    [null, null],
  ])('stop_reason %s → %s', (stop, finish) => {
    expect(finishReason(stop)).toBe(finish);
  });

  it('rejects a body that is not a message (a plain Error: the router blames the deployment)', () => {
    expect(() => toChatCompletion({ type: 'error' })).toThrow(/without a content array/);
    expect(() => toChatCompletion({ type: 'error' })).not.toThrow(GatewayError);
  });
});

describe('anthropic error classifier', () => {
  const body = (type: string, msg: string) =>
    JSON.stringify({ type: 'error', error: { type, message: msg }, request_id: 'req_1' });
  const now = Date.parse('2025-01-01T00:00:00Z');

  it.each([
    [429, 'rate_limit_error', 'Number of requests has exceeded your rate limit', 'rate_limited'],
    [529, 'overloaded_error', 'Overloaded', 'overloaded'],
    [503, 'api_error', 'Service unavailable', 'overloaded'],
    [500, 'api_error', 'Internal server error', 'server'],
    [401, 'authentication_error', 'invalid x-api-key', 'auth'],
    [403, 'permission_error', 'Your API key does not have permission', 'auth'],
    [404, 'not_found_error', 'model: claude-nope', 'not_found'],
    [413, 'request_too_large', 'Request exceeds the maximum allowed number of bytes.', 'context_length'],
    [400, 'invalid_request_error', 'prompt is too long: 208656 tokens > 200000 maximum', 'context_length'],
    [
      400,
      'invalid_request_error',
      'input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000',
      'context_length',
    ],
    [400, 'invalid_request_error', 'messages: roles must alternate', 'bad_request'],
    [400, 'invalid_request_error', 'Output blocked by content filtering policy', 'content_policy'],
  ] as const)('%d %s → %s', (status, type, msg, kind) => {
    const error = classifyAnthropicError(status, {}, body(type, msg), now);
    expect(error).toEqual({ kind, status, message: msg, code: type });
  });

  it('reads retry-after as seconds or as an HTTP date', () => {
    expect(
      classifyAnthropicError(429, { 'retry-after': '7' }, body('rate_limit_error', 'slow down'), now)
        .retryAfterMs,
    ).toBe(7000);
    expect(retryAfterMs('Wed, 01 Jan 2025 00:00:30 GMT', now)).toBe(30_000);
    expect(retryAfterMs(['3'][0], now)).toBe(3000);
    expect(retryAfterMs('soon', now)).toBeUndefined();
    expect(classifyAnthropicError(429, { 'retry-after': ['2'] }, '', now).retryAfterMs).toBe(2000);
  });

  it('reads a negative retry-after as no advice, not as "retry at once"', () => {
    // Date.parse('-5') is a date in 2001: read as one, the wait was 0.
    expect(retryAfterMs('-5', now)).toBeUndefined();
    expect(classifyAnthropicError(429, { 'retry-after': '-1' }, '', now).retryAfterMs).toBeUndefined();
  });

  it('falls back to the raw body when it is not Anthropic JSON', () => {
    expect(anthropicAdapter.error(502, {}, '<html>Bad gateway</html>')).toEqual({
      kind: 'server',
      status: 502,
      message: '<html>Bad gateway</html>',
    });
    expect(anthropicAdapter.error(502, {}, '').message).toBe('Anthropic answered HTTP 502');
  });
});
