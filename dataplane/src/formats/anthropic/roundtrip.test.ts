/**
 * Anthropic request → canonical → Anthropic request: what an Anthropic SDK client sends to
 * Gantry must reach an Anthropic deployment with the same meaning.
 */
import { describe, expect, it } from 'vitest';
import { toAnthropicBody } from '../../providers/anthropic/request.ts';
import { messagesToChat, type AnthropicMessagesRequest } from './index.ts';

const target = { upstreamModel: 'claude-sonnet-4-5', prefill: true };
const roundTrip = (body: AnthropicMessagesRequest) => toAnthropicBody(messagesToChat(body), target);

describe('Anthropic → canonical → Anthropic', () => {
  it('preserves an agent conversation: system with cache_control, tools, thinking, images, PDF, tool results', () => {
    const original: AnthropicMessagesRequest = {
      model: 'claude-sonnet-4-5',
      max_tokens: 20000,
      system: [
        { type: 'text', text: 'You are a careful assistant.' },
        { type: 'text', text: 'Long cached context.', cache_control: { type: 'ephemeral' } },
      ],
      tools: [
        {
          name: 'get_weather',
          description: 'Current weather',
          input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
          cache_control: { type: 'ephemeral' },
        },
      ],
      tool_choice: { type: 'auto', disable_parallel_tool_use: true },
      thinking: { type: 'enabled', budget_tokens: 16384 },
      stop_sequences: ['</answer>'],
      metadata: { user_id: 'user-7' },
      stream: true,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/map.png' } },
            {
              type: 'document',
              source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0xLjQ=' },
            },
            { type: 'text', text: 'What is the weather where this map points?' },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'The map shows Paris.', signature: 'EqQBCkYsig' },
            { type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: { city: 'Paris' } },
          ],
        },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'toolu_01',
              content: '18C, cloudy',
              is_error: false,
              cache_control: { type: 'ephemeral' },
            },
          ],
        },
      ],
    };
    const back = roundTrip(original);
    expect(back).toEqual({
      ...original,
      // tool_result: an explicit is_error: false is the default and is not repeated.
      messages: [
        original.messages[0],
        original.messages[1],
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'toolu_01',
              content: '18C, cloudy',
              cache_control: { type: 'ephemeral' },
            },
          ],
        },
      ],
    });
  });

  it('preserves a plain chat with sampling parameters and a prefill', () => {
    const original: AnthropicMessagesRequest = {
      model: 'claude-sonnet-4-5',
      max_tokens: 512,
      system: 'Answer in JSON.',
      temperature: 0.2,
      top_k: 5,
      messages: [
        { role: 'user', content: 'List three colours.' },
        { role: 'assistant', content: '{"colours": [' },
      ],
    };
    expect(roundTrip(original)).toEqual(original);
  });

  it('preserves tool_choice any/tool/none and error tool results', () => {
    const tools: AnthropicMessagesRequest['tools'] = [
      { name: 'f', input_schema: { type: 'object', properties: {} } },
    ];
    for (const tool_choice of [{ type: 'any' }, { type: 'tool', name: 'f' }, { type: 'none' }] as const) {
      const original: AnthropicMessagesRequest = {
        model: 'claude-sonnet-4-5',
        max_tokens: 100,
        tools,
        tool_choice,
        messages: [{ role: 'user', content: 'go' }],
      };
      expect(roundTrip(original)).toEqual(original);
    }
    const failed: AnthropicMessagesRequest = {
      model: 'claude-sonnet-4-5',
      max_tokens: 100,
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'f', input: {} }] },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 't1', content: 'boom', is_error: true },
            { type: 'text', text: 'retry' },
          ],
        },
      ],
    };
    expect(roundTrip(failed)).toEqual(failed);
  });

  it('rounds a thinking budget up to the nearest effort budget, keeping max_tokens above it', () => {
    const back = roundTrip({
      model: 'claude-sonnet-4-5',
      max_tokens: 3000,
      thinking: { type: 'enabled', budget_tokens: 2000 },
      messages: [{ role: 'user', content: 'think' }],
    });
    expect(back.thinking).toEqual({ type: 'enabled', budget_tokens: 4096 });
    expect(back.max_tokens).toBe(7096);
  });
});
