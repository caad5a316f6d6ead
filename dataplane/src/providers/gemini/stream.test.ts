import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ChatChunk } from '../../formats/openai/types.ts';
import { SseParser } from '../../formats/sse.ts';
import type { StreamContext, StreamTranslator, UpstreamTarget } from '../types.ts';
import { geminiAdapter } from './index.ts';

const target: UpstreamTarget = {
  provider: 'gemini',
  baseUrl: 'https://generativelanguage.googleapis.com/v1beta',
  upstreamModel: 'gemini-2.5-flash',
  apiKey: 'k',
  prefill: false,
};
const ctx: StreamContext = { id: 'chatcmpl-1', created: 1700000000, model: 'smart' };
const head = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1700000000, model: 'smart' };

/** Feed a recorded transcript in awkward 7-byte slices, as a socket might deliver it. */
function run(text: string): { translator: StreamTranslator; chunks: ChatChunk[] } {
  const translator = geminiAdapter.chat.stream(target, ctx);
  const parser = new SseParser();
  const chunks: ChatChunk[] = [];
  for (let i = 0; i < text.length; i += 7) {
    for (const ev of parser.push(text.slice(i, i + 7))) chunks.push(...translator.push(ev));
  }
  for (const ev of parser.end()) chunks.push(...translator.push(ev));
  return { translator, chunks };
}

const fixture = (name: string): string =>
  readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');

describe('gemini stream translator', () => {
  it('translates a recorded thinking + text + parallel tool call transcript', () => {
    const { translator, chunks } = run(fixture('stream-thinking-tools.sse'));
    expect(chunks).toEqual([
      { ...head, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] },
      {
        ...head,
        choices: [
          {
            index: 0,
            delta: { reasoning_content: '**Checking the forecast**\nThe user wants two cities.' },
            finish_reason: null,
          },
        ],
      },
      { ...head, choices: [{ index: 0, delta: { content: 'Let me look' }, finish_reason: null }] },
      { ...head, choices: [{ index: 0, delta: { content: ' both up.' }, finish_reason: null }] },
      {
        ...head,
        choices: [
          {
            index: 0,
            delta: {
              tool_calls: [
                {
                  index: 0,
                  id: 'call_0',
                  type: 'function',
                  function: { name: 'get_weather', arguments: '{"city":"Oslo","unit":"c"}' },
                },
              ],
            },
            finish_reason: null,
          },
        ],
      },
      {
        ...head,
        choices: [
          {
            index: 0,
            delta: {
              tool_calls: [
                {
                  index: 1,
                  id: 'call_1',
                  type: 'function',
                  function: { name: 'get_weather', arguments: '{"city":"Rome"}' },
                },
              ],
            },
            finish_reason: null,
          },
        ],
      },
      { ...head, choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
      {
        ...head,
        choices: [],
        usage: {
          prompt_tokens: 58,
          completion_tokens: 98,
          total_tokens: 156,
          completion_tokens_details: { reasoning_tokens: 64 },
        },
      },
    ]);
    expect(translator.finished).toBe(true);
    expect(translator.done).toBe(false);
    expect(translator.skipped).toBe(0);
    expect(translator.error).toBeUndefined();
    expect(translator.usage?.total_tokens).toBe(156);
  });

  it('ends a safety-stopped stream (CRLF framing) with content_filter', () => {
    const { translator, chunks } = run(fixture('stream-safety-stop.sse'));
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? c.choices[0]?.finish_reason ?? 'usage')).toEqual([
      '',
      'Here is a story about',
      ' a',
      'content_filter',
      'usage',
    ]);
    expect(translator.finished).toBe(true);
    expect(translator.usage).toEqual({ prompt_tokens: 9, completion_tokens: 5, total_tokens: 14 });
  });

  it('is not finished before a finish reason, and reports running usage', () => {
    const t = geminiAdapter.chat.stream(target, ctx);
    const out = t.push({
      data: '{"candidates":[{"content":{"parts":[{"text":"Hi"}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":4,"candidatesTokenCount":1,"totalTokenCount":5}}',
    });
    expect(out).toHaveLength(2);
    expect(t.finished).toBe(false);
    expect(t.usage).toEqual({ prompt_tokens: 4, completion_tokens: 1, total_tokens: 5 });
  });

  it('emits usage that arrives after the finish reason exactly once', () => {
    const t = geminiAdapter.chat.stream(target, ctx);
    t.push({ data: '{"candidates":[{"content":{"parts":[{"text":"Hi"}]},"finishReason":"MAX_TOKENS"}]}' });
    const late = t.push({
      data: '{"usageMetadata":{"promptTokenCount":4,"candidatesTokenCount":1,"totalTokenCount":5}}',
    });
    expect(late).toEqual([
      { ...head, choices: [], usage: { prompt_tokens: 4, completion_tokens: 1, total_tokens: 5 } },
    ]);
    expect(t.push({ data: '{"usageMetadata":{"promptTokenCount":4,"totalTokenCount":5}}' })).toEqual([]);
  });

  it('skips malformed events and counts them', () => {
    const t = geminiAdapter.chat.stream(target, ctx);
    expect(t.push({ data: '{"candidates": [' })).toEqual([]);
    expect(t.push({ data: '[DONE]' })).toEqual([]);
    expect(t.push({ data: '"just a string"' })).toEqual([]);
    expect(t.skipped).toBe(3);
    expect(t.push({ data: '{"candidates":[{"content":{"parts":[{"text":"ok"}]}}]}' })).toHaveLength(2);
  });

  it('surfaces an in-stream error object', () => {
    const t = geminiAdapter.chat.stream(target, ctx);
    t.push({ data: '{"candidates":[{"content":{"parts":[{"text":"partial"}]}}]}' });
    expect(
      t.push({ data: '{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}' }),
    ).toEqual([]);
    expect(t.error).toEqual({ kind: 'overloaded', status: 503, message: 'The model is overloaded.' });
    expect(t.finished).toBe(false);
  });

  it('turns a blocked prompt into an empty content_filter answer', () => {
    const t = geminiAdapter.chat.stream(target, ctx);
    const out = t.push({
      data: '{"promptFeedback":{"blockReason":"PROHIBITED_CONTENT"},"usageMetadata":{"promptTokenCount":12,"totalTokenCount":12}}',
    });
    expect(out.map((c) => c.choices[0]?.finish_reason ?? (c.usage ? 'usage' : null))).toEqual([
      null,
      'content_filter',
      'usage',
    ]);
    expect(t.finished).toBe(true);
  });

  it('keeps candidates apart when n > 1', () => {
    const t = geminiAdapter.chat.stream(target, ctx);
    t.push({
      data: '{"candidates":[{"content":{"parts":[{"text":"A"}]},"index":0},{"content":{"parts":[{"text":"B"}]},"index":1}]}',
    });
    t.push({ data: '{"candidates":[{"content":{"parts":[]},"finishReason":"STOP","index":0}]}' });
    expect(t.finished).toBe(false);
    const last = t.push({
      data: '{"candidates":[{"content":{"parts":[]},"finishReason":"STOP","index":1}]}',
    });
    expect(last[0]?.choices[0]).toEqual({ index: 1, delta: {}, finish_reason: 'stop' });
    expect(t.finished).toBe(true);
  });
});
