import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors.ts';
import { SseParser } from '../sse.ts';
import type { ChatChunk, ChunkChoice } from '../openai/types.ts';
import { ResponsesStreamEncoder } from './stream-encoder.ts';

const frame = { id: 'resp_abc', createdAt: 1, model: 'm', request: { model: 'm', input: 'x' } };
const chunk = (delta: ChunkChoice['delta'], finish: ChunkChoice['finish_reason'] = null): ChatChunk => ({
  id: 'c',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'm',
  choices: [{ index: 0, delta, finish_reason: finish }],
});
const usage = { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 };

function events(text: string): { type: string; [k: string]: unknown }[] {
  const parser = new SseParser();
  return parser.push(text).map((e) => JSON.parse(e.data) as { type: string });
}

describe('ResponsesStreamEncoder', () => {
  it('streams text then a tool call as two items, and completes with both', () => {
    const enc = new ResponsesStreamEncoder(frame);
    let out = enc.chunk(chunk({ role: 'assistant', content: 'Hi' }));
    out += enc.chunk(chunk({ content: ' there' }));
    out += enc.chunk(
      chunk({ tool_calls: [{ index: 0, id: 'call_1', function: { name: 'f', arguments: '{"a"' } }] }),
    );
    out += enc.chunk(chunk({ tool_calls: [{ index: 0, function: { arguments: ':1}' } }] }, 'tool_calls'));
    out += enc.finish(usage);
    const evs = events(out);
    expect(evs.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(evs.map((e) => e.sequence_number)).toEqual(evs.map((_, i) => i));
    const done = evs.at(-1)!.response as { output: unknown[]; usage: { total_tokens: number } };
    expect(done.output).toEqual([
      {
        type: 'message',
        id: 'msg_abc0',
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text: 'Hi there', annotations: [] }],
      },
      {
        type: 'function_call',
        id: 'fc_abc1',
        call_id: 'call_1',
        name: 'f',
        arguments: '{"a":1}',
        status: 'completed',
      },
    ]);
    expect(done.usage.total_tokens).toBe(7);
    expect(enc.completed?.status).toBe('completed');
  });

  it('ends incomplete when the output bound cut it', () => {
    const enc = new ResponsesStreamEncoder(frame);
    const out = enc.chunk(chunk({ content: 'cut' }, 'length')) + enc.finish(usage);
    const last = events(out).at(-1)!;
    expect(last.type).toBe('response.incomplete');
    expect(last.response).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
    });
  });

  it('seal stores the final response before finish writes the same text once', () => {
    const enc = new ResponsesStreamEncoder(frame);
    enc.chunk(chunk({ content: 'x' }, 'stop'));
    expect(enc.seal(usage).output).toHaveLength(1);
    const first = enc.finish(usage);
    expect(events(first).at(-1)!.type).toBe('response.completed');
    expect(enc.finish(usage)).toBe('');
  });

  it('fails with an error event and response.failed', () => {
    const enc = new ResponsesStreamEncoder(frame);
    const out = enc.chunk(chunk({ content: 'x' })) + enc.fail(new GatewayError('upstream_error', 'boom'));
    const evs = events(out);
    expect(evs.slice(-2).map((e) => e.type)).toEqual(['error', 'response.failed']);
    expect(evs.at(-1)!.response).toMatchObject({
      status: 'failed',
      error: { code: 'server_error', message: 'boom' },
    });
  });
});
