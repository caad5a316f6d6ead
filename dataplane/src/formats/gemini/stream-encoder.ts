/**
 * Canonical chunks → Gemini's streamGenerateContent SSE (`?alt=sse`): every event is a whole
 * GenerateContentResponse carrying only the new parts. Text and thoughts go out as they come;
 * a function call is sent whole once its arguments are complete, because Gemini's parts
 * carry parsed `args`, never a fragment. The last event has the finish reason and usage.
 */
import type { GatewayError } from '../../errors.ts';
import type { GeminiPart } from '../../providers/gemini/wire.ts';
import type { ClientStreamEncoder } from '../encoder.ts';
import type { ChatChunk, FinishReason, Usage } from '../openai/types.ts';
import { sseData } from '../sse.ts';
import { FINISH, parseArgs, usageMetadata } from './from-chat.ts';

interface PendingCall {
  name: string;
  args: string;
}

/** Google's canonical status names for the HTTP codes Gantry answers with. */
const STATUS_NAME: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  402: 'RESOURCE_EXHAUSTED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

export class GeminiStreamEncoder implements ClientStreamEncoder {
  private readonly calls = new Map<number, PendingCall>();
  private finishReason: FinishReason | undefined;

  constructor(private readonly meta: { id: string; model: string }) {}

  chunk(c: ChatChunk): string {
    const choice = c.choices[0];
    if (!choice) return '';
    const parts: GeminiPart[] = [];
    const d = choice.delta;
    if (d.reasoning_content) parts.push({ text: d.reasoning_content, thought: true });
    if (typeof d.content === 'string' && d.content !== '') parts.push({ text: d.content });
    for (const t of d.tool_calls ?? []) {
      const call = this.calls.get(t.index) ?? { name: '', args: '' };
      call.name += t.function?.name ?? '';
      call.args += t.function?.arguments ?? '';
      this.calls.set(t.index, call);
    }
    if (choice.finish_reason) {
      this.finishReason = choice.finish_reason;
      parts.push(...this.flushCalls());
    }
    return parts.length === 0 ? '' : this.event(parts);
  }

  finish(usage: Usage, model?: string): string {
    const parts = this.flushCalls();
    return sseData(
      JSON.stringify({
        candidates: [
          {
            content: { role: 'model', parts },
            finishReason: FINISH[this.finishReason ?? 'stop'],
            index: 0,
          },
        ],
        usageMetadata: usageMetadata(usage),
        modelVersion: model ?? this.meta.model,
        responseId: this.responseId(),
      }),
    );
  }

  /** Gemini's error object, with SPEC.md's `type` beside Google's `status`. */
  fail(error: GatewayError): string {
    return sseData(
      JSON.stringify({
        error: {
          code: error.status,
          message: error.message,
          status: STATUS_NAME[error.status] ?? 'INTERNAL',
          type: error.type,
        },
      }),
    );
  }

  private flushCalls(): GeminiPart[] {
    const parts = [...this.calls.values()].map((c): GeminiPart => ({
      functionCall: { name: c.name, args: parseArgs(c.args) },
    }));
    this.calls.clear();
    return parts;
  }

  private event(parts: GeminiPart[]): string {
    return sseData(
      JSON.stringify({
        candidates: [{ content: { role: 'model', parts }, index: 0 }],
        modelVersion: this.meta.model,
        responseId: this.responseId(),
      }),
    );
  }

  private responseId(): string {
    return this.meta.id.replace(/^chatcmpl-/, '');
  }
}
