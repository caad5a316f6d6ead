/**
 * Canonical chat chunks → the Responses API's SSE events, one encoder per request.
 *
 * Chat interleaves text and tool-call fragments in deltas; Responses streams output items
 * one after another (added, deltas, done). An item opens when the kind of content changes
 * and the previous one closes. Every event carries a `sequence_number`. The stream ends in
 * response.completed (or response.incomplete), or in `error` + response.failed.
 */
import type { GatewayError } from '../../errors.ts';
import type { ClientStreamEncoder } from '../encoder.ts';
import type { ChatChunk, FinishReason, ToolCallDelta, Usage } from '../openai/types.ts';
import { sseEvent } from '../sse.ts';
import { itemId, responseObject, responsesUsage, statusOf, type ResponseFrame } from './from-chat.ts';
import type {
  OutputFunctionCall,
  OutputItem,
  OutputMessage,
  OutputReasoning,
  ResponseObject,
} from './types.ts';

type Open =
  | { kind: 'text'; index: number; item: OutputMessage; text: string }
  | { kind: 'reasoning'; index: number; item: OutputReasoning; text: string }
  | { kind: 'tool'; index: number; item: OutputFunctionCall; toolIndex: number };

export class ResponsesStreamEncoder implements ClientStreamEncoder {
  private seq = 0;
  private started = false;
  private ended = false;
  private open: Open | undefined;
  private readonly output: OutputItem[] = [];
  private finishReason: FinishReason | null = null;
  /** The final response object once the stream completed (for the response store). */
  completed: ResponseObject | undefined;

  constructor(private readonly frame: ResponseFrame) {}

  chunk(c: ChatChunk): string {
    if (this.ended) return '';
    let out = this.start();
    const choice = c.choices.find((x) => x.index === 0);
    if (!choice) return out;
    const d = choice.delta;
    if (typeof d.reasoning_content === 'string' && d.reasoning_content !== '')
      out += this.reasoning(d.reasoning_content);
    const text = typeof d.content === 'string' && d.content !== '' ? d.content : undefined;
    if (text !== undefined) out += this.text(text);
    for (const call of d.tool_calls ?? []) out += this.toolCall(call);
    if (choice.finish_reason) this.finishReason = choice.finish_reason;
    return out;
  }

  /**
   * Ends the stream's output before anything final is written, so the caller can store the
   * response before the client sees response.completed (and chains on it at once).
   */
  seal(usage: Usage): ResponseObject {
    if (this.sealed === undefined) this.sealed = this.end(usage);
    return this.completed!;
  }

  finish(usage: Usage): string {
    if (this.sealed !== undefined) {
      const text = this.sealed;
      this.sealed = '';
      return text;
    }
    return this.end(usage);
  }

  private sealed: string | undefined;

  private end(usage: Usage): string {
    if (this.ended) return '';
    let out = this.start() + this.close();
    this.ended = true;
    const { status, incomplete } = statusOf(this.finishReason);
    const response = responseObject(this.frame, {
      status,
      incomplete,
      output: this.output,
      usage: responsesUsage(usage),
    });
    this.completed = response;
    out += this.event(status === 'completed' ? 'response.completed' : 'response.incomplete', { response });
    return out;
  }

  fail(error: GatewayError): string {
    if (this.ended) return '';
    this.ended = true;
    const code = error.status >= 500 ? 'server_error' : error.type;
    return (
      this.start() +
      this.event('error', { code, message: error.message, param: error.param ?? null }) +
      this.event('response.failed', {
        response: responseObject(this.frame, {
          status: 'failed',
          output: this.output,
          usage: null,
          error: { code, message: error.message },
        }),
      })
    );
  }

  private event(type: string, body: Record<string, unknown>): string {
    return sseEvent(type, JSON.stringify({ type, sequence_number: this.seq++, ...body }));
  }

  private start(): string {
    if (this.started) return '';
    this.started = true;
    const response = responseObject(this.frame, { status: 'in_progress', output: [], usage: null });
    return this.event('response.created', { response }) + this.event('response.in_progress', { response });
  }

  private text(delta: string): string {
    let out = '';
    if (this.open?.kind !== 'text') {
      out += this.close();
      const index = this.output.length;
      const item: OutputMessage = {
        type: 'message',
        id: itemId(this.frame.id, 'msg', index),
        status: 'in_progress',
        role: 'assistant',
        content: [],
      };
      this.output.push(item);
      this.open = { kind: 'text', index, item, text: '' };
      out +=
        this.event('response.output_item.added', { output_index: index, item: { ...item, content: [] } }) +
        this.event('response.content_part.added', {
          item_id: item.id,
          output_index: index,
          content_index: 0,
          part: { type: 'output_text', text: '', annotations: [] },
        });
    }
    const open = this.open as Extract<Open, { kind: 'text' }>;
    open.text += delta;
    return (
      out +
      this.event('response.output_text.delta', {
        item_id: open.item.id,
        output_index: open.index,
        content_index: 0,
        delta,
        logprobs: [],
      })
    );
  }

  private reasoning(delta: string): string {
    let out = '';
    if (this.open?.kind !== 'reasoning') {
      out += this.close();
      const index = this.output.length;
      const item: OutputReasoning = {
        type: 'reasoning',
        id: itemId(this.frame.id, 'rs', index),
        summary: [],
      };
      this.output.push(item);
      this.open = { kind: 'reasoning', index, item, text: '' };
      out +=
        this.event('response.output_item.added', { output_index: index, item: { ...item, summary: [] } }) +
        this.event('response.reasoning_summary_part.added', {
          item_id: item.id,
          output_index: index,
          summary_index: 0,
          part: { type: 'summary_text', text: '' },
        });
    }
    const open = this.open as Extract<Open, { kind: 'reasoning' }>;
    open.text += delta;
    return (
      out +
      this.event('response.reasoning_summary_text.delta', {
        item_id: open.item.id,
        output_index: open.index,
        summary_index: 0,
        delta,
      })
    );
  }

  private toolCall(call: ToolCallDelta): string {
    let out = '';
    const open = this.open;
    if (open?.kind !== 'tool' || open.toolIndex !== call.index) {
      // A fragment for a call already closed cannot be streamed any more; providers do not send them.
      if (this.toolItemIds.has(call.index)) return '';
      out += this.close();
      const index = this.output.length;
      const item: OutputFunctionCall = {
        type: 'function_call',
        id: itemId(this.frame.id, 'fc', index),
        call_id: call.id ?? `call_${this.frame.id}_${call.index}`,
        name: call.function?.name ?? '',
        arguments: '',
        status: 'in_progress',
      };
      this.toolItemIds.set(call.index, item.id);
      this.output.push(item);
      this.open = { kind: 'tool', index, item, toolIndex: call.index };
      out += this.event('response.output_item.added', { output_index: index, item: { ...item } });
    }
    const current = this.open as Extract<Open, { kind: 'tool' }>;
    if (call.function?.name && current.item.name === '') current.item.name = call.function.name;
    const delta = call.function?.arguments ?? '';
    if (delta === '') return out;
    current.item.arguments += delta;
    return (
      out +
      this.event('response.function_call_arguments.delta', {
        item_id: current.item.id,
        output_index: current.index,
        delta,
      })
    );
  }

  private readonly toolItemIds = new Map<number, string>();

  /** Close the open item: its done events, with the item in its final shape. */
  private close(): string {
    const open = this.open;
    if (!open) return '';
    this.open = undefined;
    const status = statusOf(this.finishReason).status === 'completed' ? 'completed' : 'incomplete';
    const base = { item_id: open.item.id, output_index: open.index };
    if (open.kind === 'text') {
      const part = { type: 'output_text' as const, text: open.text, annotations: [] };
      open.item.content = [part];
      open.item.status = status;
      return (
        this.event('response.output_text.done', {
          ...base,
          content_index: 0,
          text: open.text,
          logprobs: [],
        }) +
        this.event('response.content_part.done', { ...base, content_index: 0, part }) +
        this.event('response.output_item.done', { output_index: open.index, item: open.item })
      );
    }
    if (open.kind === 'reasoning') {
      const part = { type: 'summary_text' as const, text: open.text };
      open.item.summary = [part];
      return (
        this.event('response.reasoning_summary_text.done', { ...base, summary_index: 0, text: open.text }) +
        this.event('response.reasoning_summary_part.done', { ...base, summary_index: 0, part }) +
        this.event('response.output_item.done', { output_index: open.index, item: open.item })
      );
    }
    open.item.status = status;
    return (
      this.event('response.function_call_arguments.done', {
        ...base,
        name: open.item.name,
        arguments: open.item.arguments,
      }) + this.event('response.output_item.done', { output_index: open.index, item: open.item })
    );
  }
}
