import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors.ts';
import type { ChatCompletion } from '../openai/types.ts';
import { anthropicErrorResponse, chatToMessages, stopReasonOf, toAnthropicError } from './index.ts';

const completion: ChatCompletion = {
  id: 'chatcmpl-9xYz',
  object: 'chat.completion',
  created: 1,
  model: 'gpt-4o',
  choices: [
    {
      index: 0,
      message: {
        role: 'assistant',
        content: 'Let me look.',
        reasoning_content: 'Needs a lookup.',
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } },
        ],
      },
      finish_reason: 'tool_calls',
    },
  ],
  usage: {
    prompt_tokens: 100,
    completion_tokens: 20,
    total_tokens: 120,
    prompt_tokens_details: { cached_tokens: 40 },
  },
};

describe('chatToMessages', () => {
  it('builds an Anthropic message', () => {
    expect(chatToMessages(completion, 'claude-sonnet-4-5')).toEqual({
      id: 'msg_9xYz',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content: [
        { type: 'thinking', thinking: 'Needs a lookup.', signature: '' },
        { type: 'text', text: 'Let me look.' },
        { type: 'tool_use', id: 'call_1', name: 'lookup', input: { q: 'x' } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: {
        input_tokens: 60,
        output_tokens: 20,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 40,
      },
    });
  });

  it('prefers signed thinking blocks carried from an Anthropic upstream', () => {
    const signed = structuredClone(completion);
    Object.assign(signed.choices[0]!.message, {
      thinking_blocks: [{ type: 'thinking', thinking: 'Needs a lookup.', signature: 'sig' }],
    });
    expect(chatToMessages(signed, 'm').content[0]).toEqual({
      type: 'thinking',
      thinking: 'Needs a lookup.',
      signature: 'sig',
    });
  });

  it.each([
    ['stop', 'end_turn'],
    ['length', 'max_tokens'],
    ['tool_calls', 'tool_use'],
    ['content_filter', 'refusal'],
    [null, 'end_turn'],
  ] as const)('finish_reason %s → stop_reason %s', (finish, stop) => {
    expect(stopReasonOf(finish)).toBe(stop);
  });

  it('is accepted by the Anthropic SDK as a Message', async () => {
    const body = chatToMessages(completion, 'claude-sonnet-4-5');
    const client = new Anthropic({
      apiKey: 'test',
      baseURL: 'http://gantry.test',
      maxRetries: 0,
      fetch: async () =>
        new Response(JSON.stringify(body), { headers: { 'content-type': 'application/json' } }),
    });
    const message = await client.messages.create({
      model: 'test-model',
      max_tokens: 10,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(message.content[2]).toMatchObject({ type: 'tool_use', input: { q: 'x' } });
  });
});

describe('toAnthropicError', () => {
  it.each([
    [400, 'invalid_request_error', 'invalid_request_error'],
    [400, 'context_length_exceeded', 'invalid_request_error'],
    [401, 'authentication_error', 'authentication_error'],
    [402, 'budget_exceeded', 'billing_error'],
    [403, 'guardrail_blocked', 'permission_error'],
    [404, 'model_not_found', 'not_found_error'],
    [413, 'request_too_large', 'request_too_large'],
    [429, 'rate_limit_exceeded', 'rate_limit_error'],
    [500, 'internal_error', 'api_error'],
    [502, 'upstream_error', 'api_error'],
    [503, 'service_unavailable', 'overloaded_error'],
    [504, 'upstream_timeout', 'timeout_error'],
    [529, 'something_new', 'overloaded_error'],
    [529, 'overloaded_error', 'overloaded_error'],
    [418, 'something_new', 'invalid_request_error'],
  ] as const)('%d %s → %s', (status, type, anthropicType) => {
    expect(toAnthropicError(status, type, 'why')).toEqual({
      type: 'error',
      error: { type: anthropicType, message: 'why' },
    });
  });

  it('makes the Anthropic SDK raise its own error classes', async () => {
    const { status, body } = anthropicErrorResponse(new GatewayError('rate_limit_exceeded', 'Slow down'));
    const client = new Anthropic({
      apiKey: 'test',
      baseURL: 'http://gantry.test',
      maxRetries: 0,
      fetch: async () =>
        new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } }),
    });
    const error = await client.messages
      .create({ model: 'm', max_tokens: 1, messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.RateLimitError);
    expect((error as InstanceType<typeof Anthropic.RateLimitError>).error).toEqual({
      type: 'error',
      error: { type: 'rate_limit_error', message: 'Slow down' },
    });
  });
});
