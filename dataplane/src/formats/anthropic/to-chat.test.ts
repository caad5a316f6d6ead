import { Value } from '@sinclair/typebox/value';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors.ts';
import { AnthropicMessagesRequest, effortForBudget, messagesToChat } from './index.ts';

const req = (over: Partial<AnthropicMessagesRequest>): AnthropicMessagesRequest => ({
  model: 'claude-sonnet-4-5',
  max_tokens: 1024,
  messages: [{ role: 'user', content: 'Hi' }],
  ...over,
});

describe('AnthropicMessagesRequest schema', () => {
  it('accepts a full request and rejects one without max_tokens', () => {
    const full = req({
      system: [{ type: 'text', text: 'sys', cache_control: { type: 'ephemeral' } }],
      tools: [{ name: 'f', input_schema: { type: 'object' } }],
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
      thinking: { type: 'enabled', budget_tokens: 2048 },
      metadata: { user_id: 'u' },
    });
    expect(Value.Check(AnthropicMessagesRequest, full)).toBe(true);
    expect(Value.Check(AnthropicMessagesRequest, { model: 'm', messages: [] })).toBe(false);
    expect(
      Value.Check(AnthropicMessagesRequest, req({ messages: [{ role: 'system' as 'user', content: 'x' }] })),
    ).toBe(false);
  });
});

describe('messagesToChat', () => {
  it('maps system, parameters, metadata and stream', () => {
    const out = messagesToChat(
      req({
        system: 'Be brief.',
        temperature: 0.3,
        top_p: 0.9,
        top_k: 40,
        stop_sequences: ['END'],
        metadata: { user_id: 'u-1' },
        stream: true,
      }),
    );
    expect(out).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 1024,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
      ],
      temperature: 0.3,
      top_p: 0.9,
      top_k: 40,
      stop: ['END'],
      user: 'u-1',
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it('keeps system blocks with cache_control as parts', () => {
    const out = messagesToChat(
      req({ system: [{ type: 'text', text: 'long prompt', cache_control: { type: 'ephemeral' } }] }),
    );
    expect(out.messages[0]).toEqual({
      role: 'system',
      content: [{ type: 'text', text: 'long prompt', cache_control: { type: 'ephemeral' } }],
    });
  });

  it('maps images and base64 PDFs to image_url data URLs; richer documents pass through', () => {
    const out = messagesToChat(
      req({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/4AAQ' } },
              { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
              {
                type: 'document',
                source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' },
              },
              {
                type: 'document',
                source: { type: 'url', url: 'https://example.com/a.pdf' },
                citations: { enabled: true },
              },
              { type: 'text', text: 'Summarise' },
            ],
          },
        ],
      }),
    );
    expect(out.messages[0]?.content).toEqual([
      { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQ' } },
      { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
      { type: 'image_url', image_url: { url: 'data:application/pdf;base64,JVBERi0=' } },
      {
        type: 'document',
        source: { type: 'url', url: 'https://example.com/a.pdf' },
        citations: { enabled: true },
      },
      { type: 'text', text: 'Summarise' },
    ]);
  });

  it('maps tool_use to tool_calls and tool_result to tool messages, thinking to reasoning', () => {
    const out = messagesToChat(
      req({
        messages: [
          { role: 'user', content: 'Weather?' },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'Use the tool.', signature: 'sig' },
              { type: 'text', text: 'Checking.' },
              { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
            ],
          },
          {
            role: 'user',
            content: [
              {
                type: 'tool_result',
                tool_use_id: 'toolu_1',
                content: [{ type: 'text', text: '18C' }],
                is_error: false,
              },
              { type: 'text', text: 'And tomorrow?' },
            ],
          },
        ],
      }),
    );
    expect(out.messages).toEqual([
      { role: 'user', content: 'Weather?' },
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [
          {
            id: 'toolu_1',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
          },
        ],
        reasoning_content: 'Use the tool.',
        thinking_blocks: [{ type: 'thinking', thinking: 'Use the tool.', signature: 'sig' }],
      },
      { role: 'tool', tool_call_id: 'toolu_1', content: [{ type: 'text', text: '18C' }] },
      { role: 'user', content: 'And tomorrow?' },
    ]);
  });

  it('maps tools, tool_choice and disable_parallel_tool_use', () => {
    const out = messagesToChat(
      req({
        tools: [{ name: 'f', description: 'does f', input_schema: { type: 'object', properties: {} } }],
        tool_choice: { type: 'tool', name: 'f', disable_parallel_tool_use: true },
      }),
    );
    expect(out.tools).toEqual([
      {
        type: 'function',
        function: { name: 'f', description: 'does f', parameters: { type: 'object', properties: {} } },
      },
    ]);
    expect(out.tool_choice).toEqual({ type: 'function', function: { name: 'f' } });
    expect(out.parallel_tool_calls).toBe(false);
    expect(messagesToChat(req({ tool_choice: { type: 'any' } })).tool_choice).toBe('required');
    expect(messagesToChat(req({ tool_choice: { type: 'none' } })).tool_choice).toBe('none');
  });

  it('refuses server tools and Files API sources', () => {
    expect(() =>
      messagesToChat(req({ tools: [{ name: 'web_search', type: 'web_search_20250305' }] })),
    ).toThrow(GatewayError);
    const file = req({
      messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'file', file_id: 'file_1' } }] }],
    });
    expect(() => messagesToChat(file)).toThrow(/file sources/);
  });

  it.each([
    [1024, 'low'],
    [2000, 'medium'],
    [4096, 'medium'],
    [8000, 'high'],
    [64000, 'high'],
  ] as const)('thinking budget %d → reasoning_effort %s', (budget, effort) => {
    expect(effortForBudget(budget)).toBe(effort);
    expect(
      messagesToChat(req({ thinking: { type: 'enabled', budget_tokens: budget } })).reasoning_effort,
    ).toBe(effort);
  });

  it('disabled thinking sets no effort; adaptive uses output_config.effort', () => {
    expect(messagesToChat(req({ thinking: { type: 'disabled' } })).reasoning_effort).toBeUndefined();
    expect(
      messagesToChat(req({ thinking: { type: 'adaptive' }, output_config: { effort: 'low' } }))
        .reasoning_effort,
    ).toBe('low');
  });
});
