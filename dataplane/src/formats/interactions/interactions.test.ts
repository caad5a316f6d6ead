import { describe, expect, it } from 'vitest';
import type { ChatChunk } from '../openai/types.ts';
import { completionToInteraction, modelTurn } from './from-chat.ts';
import { InteractionsStreamEncoder } from './stream-encoder.ts';
import { inputMessages, interactionsToChat } from './to-chat.ts';

describe('interactions → chat', () => {
  it('translates every input form', () => {
    expect(inputMessages('hi')).toEqual([{ role: 'user', content: 'hi' }]);
    expect(
      inputMessages([
        { type: 'text', text: 'a' },
        { type: 'image', data: 'QQ==', mime_type: 'image/jpeg' },
      ]),
    ).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'a' },
          { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,QQ==' } },
        ],
      },
    ]);
    expect(
      inputMessages([
        { role: 'user', content: 'weather?' },
        {
          role: 'model',
          content: [{ type: 'function_call', id: 'c1', name: 'w', arguments: { city: 'x' } }],
        },
        { role: 'user', content: [{ type: 'function_result', call_id: 'c1', result: { t: 1 } }] },
      ]),
    ).toEqual([
      { role: 'user', content: 'weather?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'w', arguments: '{"city":"x"}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: '{"t":1}' },
    ]);
  });

  it('maps generation config, tools and the JSON schema, and keeps the system instruction out of history', () => {
    const { chat, conversation } = interactionsToChat(
      {
        model: 'm',
        input: 'q',
        system_instruction: 's',
        generation_config: {
          temperature: 0.5,
          max_output_tokens: 10,
          stop_sequences: ['x'],
          thinking_level: 'low',
        },
        tools: [{ type: 'function', name: 'f', parameters: { type: 'object' } }],
        response_format: { type: 'object' },
      },
      [{ role: 'user', content: 'earlier' }],
    );
    expect(chat).toMatchObject({
      messages: [
        { role: 'system', content: 's' },
        { role: 'user', content: 'earlier' },
        { role: 'user', content: 'q' },
      ],
      temperature: 0.5,
      max_completion_tokens: 10,
      stop: ['x'],
      reasoning_effort: 'low',
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
      response_format: { type: 'json_schema', json_schema: { name: 'response', schema: { type: 'object' } } },
    });
    expect(conversation).toHaveLength(2);
  });

  it('refuses what it cannot honour by name', () => {
    const bad = (req: object) => () => interactionsToChat({ model: 'm', input: 'x', ...req } as never, []);
    expect(bad({ background: true })).toThrow(/background/);
    expect(bad({ tools: [{ type: 'code_execution' }] })).toThrow(/tools\[0\]\.type/);
    expect(bad({ generation_config: { top_k: 3 } })).toThrow(/generation_config\.top_k/);
    expect(
      bad({
        input: [
          { type: 'text', text: 'a' },
          { role: 'user', content: 'b' },
        ],
      }),
    ).toThrow(/mixes/);
  });
});

describe('chat → interaction', () => {
  const frame = { id: 'int_1', model: 'm', createdAt: 0 };
  const usage = { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 };

  it('turns tool calls into function_call outputs awaiting results', () => {
    const i = completionToInteraction(
      {
        id: 'c',
        object: 'chat.completion',
        created: 0,
        model: 'm',
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: null,
              tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
            },
            finish_reason: 'tool_calls',
          },
        ],
      },
      usage,
      frame,
    );
    expect(i).toMatchObject({
      status: 'requires_action',
      outputs: [{ type: 'function_call', id: 'c1', name: 'f', arguments: { a: 1 } }],
      usage: { total_input_tokens: 3, total_output_tokens: 4, total_tokens: 7 },
    });
    expect(modelTurn(i.outputs)).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
    });
  });

  it('streams start, text deltas, whole function calls and complete, in order', () => {
    const enc = new InteractionsStreamEncoder(frame);
    const chunk = (
      delta: ChatChunk['choices'][number]['delta'],
      finish: 'stop' | 'tool_calls' | null = null,
    ): ChatChunk => ({
      id: 'c',
      object: 'chat.completion.chunk',
      created: 0,
      model: 'm',
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
    let out = enc.chunk(chunk({ content: 'Hel' }));
    out += enc.chunk(chunk({ content: 'lo' }));
    out += enc.chunk(
      chunk({ tool_calls: [{ index: 0, id: 'c1', function: { name: 'f', arguments: '{"a"' } }] }),
    );
    out += enc.chunk(chunk({ tool_calls: [{ index: 0, function: { arguments: ':1}' } }] }, 'tool_calls'));
    out += enc.finish(usage);
    const events = out
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => JSON.parse(l.slice(6)) as { event_type: string; [k: string]: unknown });
    expect(events.map((e) => e.event_type)).toEqual([
      'interaction.start',
      'content.start',
      'content.delta',
      'content.delta',
      'content.stop',
      'content.start',
      'content.delta',
      'content.stop',
      'interaction.complete',
    ]);
    expect(events.at(-1)!.interaction).toMatchObject({
      status: 'requires_action',
      outputs: [
        { type: 'text', text: 'Hello' },
        { type: 'function_call', id: 'c1', name: 'f', arguments: { a: 1 } },
      ],
    });
  });
});
