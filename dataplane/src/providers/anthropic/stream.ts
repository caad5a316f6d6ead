/**
 * Anthropic SSE events → canonical chat.completion.chunk objects, one translator per request.
 *
 * Anthropic numbers content blocks across the whole message (thinking, text and tool_use
 * share one index space); OpenAI numbers tool calls on their own. The translator remembers
 * what each block index is and which tool-call index it became.
 */
import type { ChatChunk, ChunkChoice, FinishReason, Usage } from '../../formats/openai/types.ts';
import type { DeltaExtensions } from '../../formats/anthropic/types.ts';
import { isRecord } from '../../formats/anthropic/util.ts';
import type { SseEvent } from '../../formats/sse.ts';
import type { StreamContext, StreamTranslator, UpstreamError } from '../types.ts';
import { kindOfErrorType, STATUS_OF_ERROR_TYPE } from './errors.ts';
import { finishReason, reportsUsage, toUsage } from './response.ts';

type Block =
  { kind: 'text' } | { kind: 'thinking' } | { kind: 'tool'; toolIndex: number } | { kind: 'other' };
type Delta = ChunkChoice['delta'] & DeltaExtensions;

export class AnthropicStreamTranslator implements StreamTranslator {
  private readonly ctx: StreamContext;
  private readonly blocks = new Map<number, Block>();
  private toolCount = 0;
  private roleSent = false;
  /** Raw Anthropic usage counters; message_delta values overwrite message_start ones. */
  private readonly counters: Record<string, unknown> = {};
  private isDone = false;
  private isFinished = false;
  private failure: UpstreamError | undefined;
  private skippedCount = 0;

  constructor(ctx: StreamContext) {
    this.ctx = ctx;
  }

  get done(): boolean {
    return this.isDone;
  }
  get finished(): boolean {
    return this.isFinished;
  }
  /** Only once the prompt's count is known (message_start has it); a bare output count is not usage. */
  get usage(): Usage | undefined {
    const usage = this.counters;
    return reportsUsage(usage) ? toUsage(usage) : undefined;
  }
  get error(): UpstreamError | undefined {
    return this.failure;
  }
  get skipped(): number {
    return this.skippedCount;
  }

  push(event: SseEvent): ChatChunk[] {
    let data: unknown;
    try {
      data = JSON.parse(event.data);
    } catch {
      this.skippedCount++;
      return [];
    }
    if (!isRecord(data)) {
      this.skippedCount++;
      return [];
    }
    const type = typeof data['type'] === 'string' ? data['type'] : event.event;
    switch (type) {
      case 'message_start':
        this.record(isRecord(data['message']) ? data['message']['usage'] : undefined);
        return this.role();
      case 'content_block_start':
        return this.blockStart(data);
      case 'content_block_delta':
        return this.blockDelta(data);
      case 'message_delta':
        return this.messageDelta(data);
      case 'message_stop': {
        this.isDone = true;
        const usage = this.usage;
        return usage ? [this.chunk([], usage)] : [];
      }
      case 'error':
        this.fail(data['error']);
        return [];
      default:
        // ping, content_block_stop and event types added later carry nothing to translate.
        return [];
    }
  }

  private chunk(choices: ChunkChoice[], usage?: Usage): ChatChunk {
    const chunk: ChatChunk = {
      id: this.ctx.id,
      object: 'chat.completion.chunk',
      created: this.ctx.created,
      model: this.ctx.model,
      choices,
    };
    if (usage !== undefined) chunk.usage = usage;
    return chunk;
  }

  private emit(delta: Delta, finish: FinishReason | null = null): ChatChunk[] {
    const out = this.roleSent ? [] : this.role();
    out.push(this.chunk([{ index: 0, delta, finish_reason: finish }]));
    return out;
  }

  private role(): ChatChunk[] {
    if (this.roleSent) return [];
    this.roleSent = true;
    return [this.chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }])];
  }

  private record(usage: unknown): void {
    if (!isRecord(usage)) return;
    for (const [key, value] of Object.entries(usage))
      if (value !== null && value !== undefined) this.counters[key] = value;
  }

  private blockStart(data: Record<string, unknown>): ChatChunk[] {
    const index = data['index'];
    const block = data['content_block'];
    if (typeof index !== 'number' || !isRecord(block)) {
      this.skippedCount++;
      return [];
    }
    switch (block['type']) {
      case 'text': {
        this.blocks.set(index, { kind: 'text' });
        const text = typeof block['text'] === 'string' ? block['text'] : '';
        return text === '' ? [] : this.emit({ content: text });
      }
      case 'thinking': {
        this.blocks.set(index, { kind: 'thinking' });
        const thinking = typeof block['thinking'] === 'string' ? block['thinking'] : '';
        return thinking === '' ? [] : this.emit({ reasoning_content: thinking });
      }
      case 'redacted_thinking':
        this.blocks.set(index, { kind: 'other' });
        return this.emit({
          thinking_blocks: [{ type: 'redacted_thinking', data: String(block['data'] ?? '') }],
        });
      case 'tool_use': {
        const toolIndex = this.toolCount++;
        this.blocks.set(index, { kind: 'tool', toolIndex });
        // input is `{}` at block start; the arguments arrive as input_json_delta fragments.
        return this.emit({
          tool_calls: [
            {
              index: toolIndex,
              id: String(block['id'] ?? ''),
              type: 'function',
              function: { name: String(block['name'] ?? ''), arguments: '' },
            },
          ],
        });
      }
      default:
        // Server-tool blocks and future kinds: their deltas are ignored too.
        this.blocks.set(index, { kind: 'other' });
        return [];
    }
  }

  private blockDelta(data: Record<string, unknown>): ChatChunk[] {
    const index = data['index'];
    const delta = data['delta'];
    if (typeof index !== 'number' || !isRecord(delta)) {
      this.skippedCount++;
      return [];
    }
    const block = this.blocks.get(index);
    switch (delta['type']) {
      case 'text_delta':
        return typeof delta['text'] === 'string' && delta['text'] !== '' && block?.kind !== 'other'
          ? this.emit({ content: delta['text'] })
          : [];
      case 'thinking_delta':
        return typeof delta['thinking'] === 'string' && delta['thinking'] !== ''
          ? this.emit({ reasoning_content: delta['thinking'] })
          : [];
      case 'signature_delta':
        return typeof delta['signature'] === 'string'
          ? this.emit({ reasoning_signature: delta['signature'] })
          : [];
      case 'input_json_delta': {
        const fragment = delta['partial_json'];
        if (block?.kind !== 'tool' || typeof fragment !== 'string' || fragment === '') return [];
        return this.emit({ tool_calls: [{ index: block.toolIndex, function: { arguments: fragment } }] });
      }
      default:
        // citations_delta and later delta kinds have no canonical form.
        return [];
    }
  }

  private messageDelta(data: Record<string, unknown>): ChatChunk[] {
    this.record(data['usage']);
    const delta = data['delta'];
    const finish = isRecord(delta) ? finishReason(delta['stop_reason']) : null;
    if (finish === null || this.isFinished) return [];
    this.isFinished = true;
    return this.emit({}, finish);
  }

  private fail(raw: unknown): void {
    const error = isRecord(raw) ? raw : {};
    const type = typeof error['type'] === 'string' ? error['type'] : 'api_error';
    const message = typeof error['message'] === 'string' && error['message'] !== '' ? error['message'] : type;
    this.failure = {
      kind: kindOfErrorType(type, message),
      status: STATUS_OF_ERROR_TYPE[type] ?? 500,
      message,
    };
  }
}
