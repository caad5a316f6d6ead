/**
 * Canonical chat.completion.chunk objects → Anthropic SSE text, one encoder per request.
 *
 * Anthropic streams content blocks one after another (start, deltas, stop), each with an
 * index in one sequence shared by thinking, text and tool_use; OpenAI interleaves content
 * and tool-call deltas in one delta object. The encoder opens a block when the kind of
 * content changes and closes the previous one. Events: message_start, content blocks,
 * message_delta (stop_reason, usage), message_stop; or an `error` event when a stream fails.
 */
import type { ChatChunk, ChunkChoice, FinishReason, ToolCallDelta, Usage } from '../openai/types.ts';
import { sseEvent } from '../sse.ts';
import { anthropicErrorType } from './errors.ts';
import { anthropicUsageOf, messageId, stopReasonOf } from './from-chat.ts';
import type { AnthropicStopReason, AnthropicStreamEvent, DeltaExtensions } from './types.ts';
import { isRecord } from './util.ts';

export interface StreamEncoderOptions {
  /** Canonical or Anthropic id; becomes a `msg_` id. */
  id: string;
  /** The model the client asked for, echoed back. */
  model: string;
  /** Prompt tokens when counted before the upstream call; message_delta repeats the final count. */
  inputTokens?: number;
}

type Open = { kind: 'text' | 'thinking'; index: number } | { kind: 'tool'; index: number; toolIndex: number };
type Delta = ChunkChoice['delta'] & DeltaExtensions;

const write = (event: AnthropicStreamEvent): string => sseEvent(event.type, JSON.stringify(event));

export class AnthropicStreamEncoder {
  private readonly id: string;
  private readonly model: string;
  private readonly inputTokens: number;
  private started = false;
  private ended = false;
  private open: Open | undefined;
  private nextIndex = 0;
  /** Tool-call indexes already given a block: a late fragment for a closed one cannot be sent. */
  private readonly toolsSeen = new Set<number>();
  private stopReason: AnthropicStopReason | undefined;
  private usage: Usage | undefined;

  constructor(options: StreamEncoderOptions) {
    this.id = messageId(options.id);
    this.model = options.model;
    this.inputTokens = options.inputTokens ?? 0;
  }

  /** SSE text for one canonical chunk (possibly empty). */
  push(chunk: ChatChunk): string {
    if (this.ended) return '';
    let out = this.start();
    if (chunk.usage) this.usage = chunk.usage;
    const choice = chunk.choices.find((c) => c.index === 0);
    if (choice === undefined) return out;
    const delta: Delta = choice.delta;
    out += this.thinking(delta);
    const text = typeof delta.content === 'string' && delta.content !== '' ? delta.content : delta.refusal;
    if (typeof text === 'string' && text !== '') {
      out +=
        this.ensure('text') +
        write({
          type: 'content_block_delta',
          index: this.nextIndex - 1,
          delta: { type: 'text_delta', text },
        });
    }
    for (const call of delta.tool_calls ?? []) out += this.toolCall(call);
    if (choice.finish_reason !== null && choice.finish_reason !== undefined) {
      this.stopReason = stopReasonOf(choice.finish_reason as FinishReason);
      out += this.close();
    }
    return out;
  }

  /** Close the message: open block, message_delta with stop reason and usage, message_stop. */
  finish(): string {
    if (this.ended) return '';
    const out = this.start() + this.close();
    this.ended = true;
    const usage = anthropicUsageOf(this.usage);
    const deltaUsage = this.usage === undefined ? { output_tokens: 0 } : usage;
    return (
      out +
      write({
        type: 'message_delta',
        delta: { stop_reason: this.stopReason ?? 'end_turn', stop_sequence: null },
        usage: deltaUsage,
      }) +
      write({ type: 'message_stop' })
    );
  }

  /**
   * An Anthropic `error` event for a stream that failed after it started (Anthropic clients
   * treat it as the end of the stream). `type` is a Gantry error type or an Anthropic one (see anthropicErrorType).
   */
  error(type: string, message: string, status = 500): string {
    if (this.ended) return '';
    this.ended = true;
    const body = { type: 'error', error: { type: anthropicErrorType(status, type), message } };
    return sseEvent('error', JSON.stringify(body));
  }

  private start(): string {
    if (this.started) return '';
    this.started = true;
    return write({
      type: 'message_start',
      message: {
        id: this.id,
        type: 'message',
        role: 'assistant',
        model: this.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: this.inputTokens, output_tokens: 0 },
      },
    });
  }

  private close(): string {
    if (this.open === undefined) return '';
    const index = this.open.index;
    this.open = undefined;
    return write({ type: 'content_block_stop', index });
  }

  /** Make sure a text or thinking block is the open one. */
  private ensure(kind: 'text' | 'thinking'): string {
    if (this.open?.kind === kind) return '';
    const out = this.close();
    const index = this.nextIndex++;
    this.open = { kind, index };
    const block =
      kind === 'text'
        ? { type: 'text' as const, text: '' }
        : { type: 'thinking' as const, thinking: '', signature: '' };
    return out + write({ type: 'content_block_start', index, content_block: block });
  }

  private thinking(delta: Delta): string {
    let out = '';
    for (const block of delta.thinking_blocks ?? []) {
      if (!isRecord(block) || block.type !== 'redacted_thinking') continue;
      out += this.close();
      const index = this.nextIndex++;
      out += write({
        type: 'content_block_start',
        index,
        content_block: { type: 'redacted_thinking', data: block.data },
      });
      out += write({ type: 'content_block_stop', index });
    }
    if (typeof delta.reasoning_content === 'string' && delta.reasoning_content !== '') {
      out += this.ensure('thinking');
      out += write({
        type: 'content_block_delta',
        index: this.nextIndex - 1,
        delta: { type: 'thinking_delta', thinking: delta.reasoning_content },
      });
    }
    if (typeof delta.reasoning_signature === 'string') {
      // The signature is the last event of a thinking block at Anthropic.
      out += this.ensure('thinking');
      out += write({
        type: 'content_block_delta',
        index: this.nextIndex - 1,
        delta: { type: 'signature_delta', signature: delta.reasoning_signature },
      });
    }
    return out;
  }

  private toolCall(call: ToolCallDelta): string {
    let out = '';
    const open = this.open;
    if (open?.kind !== 'tool' || open.toolIndex !== call.index) {
      // OpenAI-style upstreams finish one tool call before starting the next; a fragment for
      // a call whose block is already closed cannot be sent in Anthropic's format.
      if (this.toolsSeen.has(call.index)) return '';
      this.toolsSeen.add(call.index);
      out += this.close();
      const index = this.nextIndex++;
      this.open = { kind: 'tool', index, toolIndex: call.index };
      const id =
        call.id !== undefined && call.id !== '' ? call.id : `toolu_${this.id.slice(4)}_${call.index}`;
      out += write({
        type: 'content_block_start',
        index,
        content_block: { type: 'tool_use', id, name: call.function?.name ?? '', input: {} },
      });
    }
    const fragment = call.function?.arguments;
    if (typeof fragment === 'string' && fragment !== '') {
      out += write({
        type: 'content_block_delta',
        index: this.open?.index ?? 0,
        delta: { type: 'input_json_delta', partial_json: fragment },
      });
    }
    return out;
  }
}
