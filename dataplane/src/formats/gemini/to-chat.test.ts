import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors.ts';
import { chatToGemini } from './from-chat.ts';
import { effortOf, geminiToChat, toJsonSchema } from './to-chat.ts';

describe('Gemini edge → canonical chat', () => {
  it('pairs function responses with the calls they answer, by name and in order', () => {
    const chat = geminiToChat(
      {
        contents: [
          { role: 'user', parts: [{ text: 'two cities' }] },
          {
            role: 'model',
            parts: [
              { functionCall: { name: 'w', args: { city: 'a' } } },
              { functionCall: { name: 'w', args: { city: 'b' } } },
            ],
          },
          {
            role: 'user',
            parts: [
              { functionResponse: { name: 'w', response: { t: 1 } } },
              { functionResponse: { name: 'w', response: { t: 2 } } },
            ],
          },
        ],
      },
      'm',
    );
    expect(chat.messages.slice(1)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_0', type: 'function', function: { name: 'w', arguments: '{"city":"a"}' } },
          { id: 'call_1', type: 'function', function: { name: 'w', arguments: '{"city":"b"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_0', content: '{"t":1}' },
      { role: 'tool', tool_call_id: 'call_1', content: '{"t":2}' },
    ]);
  });

  it('refuses a function response without a call, naming the part', () => {
    const run = () =>
      geminiToChat({ contents: [{ parts: [{ functionResponse: { name: 'x', response: {} } }] }] }, 'm');
    expect(run).toThrow(GatewayError);
    expect(run).toThrow(/contents\[0\]\.parts\[0\]\.functionResponse\.name/);
  });

  it('maps thinking budgets, tool modes and nullable schemas', () => {
    expect([effortOf(-1), effortOf(0), effortOf(512), effortOf(4096), effortOf(30000)]).toEqual([
      undefined,
      'minimal',
      'low',
      'medium',
      'high',
    ]);
    expect(toJsonSchema({ type: 'STRING', nullable: true })).toEqual({ type: ['string', 'null'] });
    const forced = geminiToChat(
      {
        contents: [{ parts: [{ text: 'x' }] }],
        toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['f'] } },
      },
      'm',
    );
    expect(forced.tool_choice).toEqual({ type: 'function', function: { name: 'f' } });
    expect(() =>
      geminiToChat(
        {
          contents: [{ parts: [{ text: 'x' }] }],
          toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['f', 'g'] } },
        },
        'm',
      ),
    ).toThrow(/allowedFunctionNames/);
  });
});

describe('canonical completion → Gemini response', () => {
  it('splits reasoning out as thought parts and thinking tokens out of candidates', () => {
    const res = chatToGemini(
      {
        id: 'chatcmpl-abc',
        object: 'chat.completion',
        created: 0,
        model: 'm',
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: 'hi', reasoning_content: 'hmm' },
            finish_reason: 'length',
          },
        ],
      },
      {
        prompt_tokens: 10,
        completion_tokens: 7,
        total_tokens: 17,
        completion_tokens_details: { reasoning_tokens: 5 },
      },
    );
    expect(res.candidates?.[0]).toEqual({
      content: { role: 'model', parts: [{ text: 'hmm', thought: true }, { text: 'hi' }] },
      finishReason: 'MAX_TOKENS',
      index: 0,
    });
    expect(res.usageMetadata).toEqual({
      promptTokenCount: 10,
      candidatesTokenCount: 2,
      thoughtsTokenCount: 5,
      totalTokenCount: 17,
    });
    expect(res.responseId).toBe('abc');
  });
});
