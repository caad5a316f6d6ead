import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ChatChunk } from '../../formats/openai/types.ts';
import { SseParser } from '../../formats/sse.ts';
import { anthropicAdapter } from './index.ts';

const ctx = { id: 'chatcmpl-test', created: 1_700_000_000, model: 'claude-sonnet-4-5' };
const target = {
  provider: 'anthropic',
  baseUrl: 'https://api.anthropic.com/v1',
  upstreamModel: 'x',
  apiKey: 'k',
  prefill: true,
} as const;
const fixture = (name: string): string =>
  readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');

/** Feed the transcript in small uneven pieces, as a network would. */
function run(name: string) {
  const translator = anthropicAdapter.chat.stream(target, ctx);
  const parser = new SseParser();
  const text = fixture(name);
  const chunks: ChatChunk[] = [];
  for (let i = 0; i < text.length; i += 37)
    for (const event of parser.push(text.slice(i, i + 37))) chunks.push(...translator.push(event));
  for (const event of parser.end()) chunks.push(...translator.push(event));
  return { translator, chunks };
}

describe('anthropic stream translator: thinking + text + two tool calls', () => {
  const { translator, chunks } = run('thinking-tool-use.sse');
  const deltas = chunks.flatMap((c) => c.choices.map((choice) => choice.delta));

  it('starts with a role chunk and stamps every chunk with the context', () => {
    expect(chunks[0]?.choices[0]?.delta).toEqual({ role: 'assistant', content: '' });
    for (const chunk of chunks)
      expect(chunk).toMatchObject({
        id: 'chatcmpl-test',
        object: 'chat.completion.chunk',
        created: 1_700_000_000,
        model: 'claude-sonnet-4-5',
      });
  });

  it('streams reasoning, its signature and text', () => {
    expect(deltas.map((d) => d.reasoning_content ?? '').join('')).toBe(
      'The user wants the weather in Paris. I should call get_weather.',
    );
    expect(deltas.find((d) => 'reasoning_signature' in d)).toEqual({
      reasoning_signature: 'EqQBCkYIAxgCIkAsig==',
    });
    expect(deltas.map((d) => d.content ?? '').join('')).toBe('Let me check the weather.');
  });

  it('streams tool calls with OpenAI indexes: id and name first, then argument fragments', () => {
    const calls = deltas.flatMap((d) => d.tool_calls ?? []);
    expect(calls[0]).toEqual({
      index: 0,
      id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6',
      type: 'function',
      function: { name: 'get_weather', arguments: '' },
    });
    const args = (i: number) =>
      calls
        .filter((c) => c.index === i)
        .map((c) => c.function?.arguments ?? '')
        .join('');
    expect(JSON.parse(args(0))).toEqual({ city: 'Paris', unit: 'c' });
    expect(calls.find((c) => c.index === 1 && c.id !== undefined)?.function?.name).toBe('get_time');
    expect(JSON.parse(args(1))).toEqual({ tz: 'Europe/Paris' });
  });

  it('ends with a finish chunk, then a usage chunk with no choices', () => {
    const finish = chunks.filter((c) => c.choices[0]?.finish_reason);
    expect(finish).toHaveLength(1);
    expect(finish[0]?.choices[0]?.finish_reason).toBe('tool_calls');
    const last = chunks[chunks.length - 1];
    expect(last?.choices).toEqual([]);
    expect(last?.usage).toEqual({
      prompt_tokens: 600,
      completion_tokens: 89,
      total_tokens: 689,
      prompt_tokens_details: { cached_tokens: 128 },
    });
  });

  it('reports done, finished, usage and nothing skipped', () => {
    expect(translator.done).toBe(true);
    expect(translator.finished).toBe(true);
    expect(translator.error).toBeUndefined();
    expect(translator.skipped).toBe(0);
    expect(translator.usage?.completion_tokens).toBe(89);
  });
});

describe('anthropic stream translator: error midway', () => {
  const { translator, chunks } = run('overloaded-midway.sse');

  it('keeps what arrived, skips the malformed event and reports the overload', () => {
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('Once upon');
    expect(translator.skipped).toBe(1);
    expect(translator.error).toEqual({ kind: 'overloaded', status: 529, message: 'Overloaded' });
    expect(translator.done).toBe(false);
    expect(translator.finished).toBe(false);
    expect(translator.usage?.prompt_tokens).toBe(12);
  });
});

describe('anthropic stream translator: edge cases', () => {
  it('emits the role chunk even when message_start is missing and maps max_tokens → length', () => {
    const t = anthropicAdapter.chat.stream(target, ctx);
    const out = [
      ...t.push({
        event: 'content_block_start',
        data: '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"Hi"}}',
      }),
      ...t.push({
        event: 'message_delta',
        data: '{"type":"message_delta","delta":{"stop_reason":"max_tokens","stop_sequence":null},"usage":{"output_tokens":5}}',
      }),
    ];
    expect(out.map((c) => c.choices[0]?.delta)).toEqual([
      { role: 'assistant', content: '' },
      { content: 'Hi' },
      {},
    ]);
    expect(out[2]?.choices[0]?.finish_reason).toBe('length');
    expect(t.finished).toBe(true);
    expect(t.done).toBe(false);
  });

  it('classifies an in-stream invalid_request_error about length as context_length', () => {
    const t = anthropicAdapter.chat.stream(target, ctx);
    t.push({
      event: 'error',
      data: '{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 5 tokens > 4 maximum"}}',
    });
    expect(t.error?.kind).toBe('context_length');
  });
});
