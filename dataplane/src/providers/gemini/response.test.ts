import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors.ts';
import type { UpstreamTarget } from '../types.ts';
import { geminiAdapter } from './index.ts';
import { mapFinishReason, toUsage } from './response.ts';

const target: UpstreamTarget = {
  provider: 'gemini',
  baseUrl: 'https://generativelanguage.googleapis.com/v1beta',
  upstreamModel: 'gemini-2.5-flash',
  apiKey: 'k',
  prefill: false,
};
const respond = (body: unknown) => geminiAdapter.chat.response(body, target);

describe('gemini response mapping', () => {
  it('maps text, thoughts and usage', () => {
    const out = respond({
      candidates: [
        {
          content: {
            role: 'model',
            parts: [{ text: 'Plan: add.', thought: true }, { text: '2 + 2 ' }, { text: '= 4' }],
          },
          finishReason: 'STOP',
          index: 0,
        },
      ],
      usageMetadata: {
        promptTokenCount: 10,
        candidatesTokenCount: 5,
        thoughtsTokenCount: 7,
        cachedContentTokenCount: 4,
        totalTokenCount: 22,
      },
      modelVersion: 'gemini-2.5-flash-001',
      responseId: 'abc',
    });
    expect(out.id).toBe('chatcmpl-abc');
    expect(out.object).toBe('chat.completion');
    expect(out.model).toBe('gemini-2.5-flash-001');
    expect(typeof out.created).toBe('number');
    expect(out.choices).toEqual([
      {
        index: 0,
        message: { role: 'assistant', content: '2 + 2 = 4', reasoning_content: 'Plan: add.' },
        finish_reason: 'stop',
      },
    ]);
    expect(out.usage).toEqual({
      prompt_tokens: 10,
      completion_tokens: 12,
      total_tokens: 22,
      prompt_tokens_details: { cached_tokens: 4 },
      completion_tokens_details: { reasoning_tokens: 7 },
    });
  });

  it('maps function calls to tool_calls with generated ids and JSON arguments', () => {
    const out = respond({
      candidates: [
        {
          content: {
            role: 'model',
            parts: [
              { functionCall: { name: 'get_weather', args: { city: 'Oslo' } }, thoughtSignature: 'c2ln' },
              { functionCall: { name: 'now' } },
            ],
          },
          finishReason: 'STOP',
        },
      ],
    });
    expect(out.choices[0]).toEqual({
      index: 0,
      message: {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
          { id: 'call_1', type: 'function', function: { name: 'now', arguments: '{}' } },
        ],
      },
      finish_reason: 'tool_calls',
    });
    expect(out.usage).toBeUndefined();
  });

  it('keeps tool call ids unique across candidates', () => {
    const call = { content: { parts: [{ functionCall: { name: 'f', args: {} } }] }, finishReason: 'STOP' };
    const out = respond({
      candidates: [
        { ...call, index: 0 },
        { ...call, index: 1 },
      ],
    });
    expect(out.choices.map((c) => c.message.tool_calls?.[0]?.id)).toEqual(['call_0', 'call_1']);
    expect(out.choices.map((c) => c.index)).toEqual([0, 1]);
  });

  it('maps a safety-stopped candidate without content to content_filter', () => {
    const out = respond({
      candidates: [{ finishReason: 'SAFETY', index: 0, safetyRatings: [{ category: 'X', blocked: true }] }],
      usageMetadata: { promptTokenCount: 8, totalTokenCount: 8 },
    });
    expect(out.choices).toEqual([
      { index: 0, message: { role: 'assistant', content: '' }, finish_reason: 'content_filter' },
    ]);
    expect(out.usage).toEqual({ prompt_tokens: 8, completion_tokens: 0, total_tokens: 8 });
  });

  it('turns a blocked prompt into an empty content_filter completion', () => {
    const out = respond({
      promptFeedback: { blockReason: 'SAFETY', safetyRatings: [] },
      usageMetadata: { promptTokenCount: 8, totalTokenCount: 8 },
    });
    expect(out.choices).toEqual([
      { index: 0, message: { role: 'assistant', content: '' }, finish_reason: 'content_filter' },
    ]);
    expect(out.model).toBe('gemini-2.5-flash');
  });

  it('maps the finish reason table', () => {
    const table: [string, boolean, string][] = [
      ['STOP', false, 'stop'],
      ['STOP', true, 'tool_calls'],
      ['MAX_TOKENS', false, 'length'],
      ['MAX_TOKENS', true, 'length'],
      ['SAFETY', false, 'content_filter'],
      ['RECITATION', false, 'content_filter'],
      ['BLOCKLIST', false, 'content_filter'],
      ['PROHIBITED_CONTENT', false, 'content_filter'],
      ['SPII', false, 'content_filter'],
      ['OTHER', false, 'stop'],
      ['MALFORMED_FUNCTION_CALL', false, 'stop'],
    ];
    for (const [reason, calls, expected] of table)
      expect([reason, mapFinishReason(reason, calls)]).toEqual([reason, expected]);
  });

  it('adds tool-use prompt tokens and fills a missing total', () => {
    expect(toUsage({ promptTokenCount: 3, toolUsePromptTokenCount: 2, candidatesTokenCount: 4 })).toEqual({
      prompt_tokens: 5,
      completion_tokens: 4,
      total_tokens: 9,
    });
  });

  it('rejects bodies that are not a Gemini response', () => {
    // Plain Errors: the router's decode step blames the deployment and fails over.
    expect(() => respond('oops')).toThrow(/not an object/);
    expect(() => respond('oops')).not.toThrow(GatewayError);
    expect(() => respond({ usageMetadata: { promptTokenCount: 1 } })).toThrow(/without candidates/);
  });
});
