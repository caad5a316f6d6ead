/**
 * Gemini `streamGenerateContent?alt=sse` → canonical chunks. Every event is a partial
 * GenerateContentResponse: new text per candidate, whole function calls, and on the last
 * event a finishReason plus the final usageMetadata. Gemini sends no end marker, so `done`
 * never turns true; `finished` tells the router that EOF after it is a complete answer.
 */
import type { ChatChunk, ChunkChoice, Usage } from '../../formats/openai/types.ts';
import type { SseEvent } from '../../formats/sse.ts';
import type { StreamContext, StreamTranslator, UpstreamError } from '../types.ts';
import { fromGoogleError, readGoogleError } from './errors.ts';
import { isRecord, tryParseJson } from '../shared/retry-after.ts';
import { mapFinishReason, partsOf, toolCallId, toUsage } from './response.ts';
import type { GeminiGenerateResponse } from './wire.ts';

interface CandidateState {
  toolCalls: number;
  finished: boolean;
}

export class GeminiStreamTranslator implements StreamTranslator {
  readonly done = false;
  private readonly candidates = new Map<number, CandidateState>();
  private calls = 0;
  private usageValue: Usage | undefined;
  private usageSent = false;
  private errorValue: UpstreamError | undefined;
  private skippedCount = 0;

  constructor(private readonly ctx: StreamContext) {}

  get finished(): boolean {
    if (this.candidates.size === 0) return false;
    for (const c of this.candidates.values()) if (!c.finished) return false;
    return true;
  }
  get usage(): Usage | undefined {
    return this.usageValue;
  }
  get error(): UpstreamError | undefined {
    return this.errorValue;
  }
  get skipped(): number {
    return this.skippedCount;
  }

  push(event: SseEvent): ChatChunk[] {
    const parsed = tryParseJson(event.data);
    if (!isRecord(parsed)) {
      this.skippedCount++;
      return [];
    }
    const googleError = readGoogleError(parsed);
    if (googleError) {
      this.errorValue = fromGoogleError(0, googleError);
      return [];
    }
    const res = parsed as GeminiGenerateResponse;
    const out: ChatChunk[] = [];
    const candidates = Array.isArray(res.candidates) ? res.candidates : [];
    candidates.forEach((candidate, position) => {
      const index = candidate.index ?? position;
      const state = this.start(index, out);
      if (state.finished) return;
      for (const part of partsOf(candidate)) {
        if (part.functionCall) {
          // Gemini streams a call whole, so one delta carries id, name and all arguments.
          const args = JSON.stringify(part.functionCall.args ?? {});
          const call = { name: part.functionCall.name, arguments: args };
          const delta = { index: state.toolCalls++, id: toolCallId(this.calls++), type: 'function' as const };
          out.push(
            this.chunk({ index, delta: { tool_calls: [{ ...delta, function: call }] }, finish_reason: null }),
          );
        } else if (typeof part.text === 'string' && part.text !== '') {
          const delta = part.thought === true ? { reasoning_content: part.text } : { content: part.text };
          out.push(this.chunk({ index, delta, finish_reason: null }));
        }
      }
      if (candidate.finishReason !== undefined) {
        const reason = mapFinishReason(candidate.finishReason, state.toolCalls > 0);
        out.push(this.chunk({ index, delta: {}, finish_reason: reason }));
        state.finished = true;
      }
    });
    if (candidates.length === 0 && res.promptFeedback?.blockReason !== undefined) {
      // The prompt was refused before any candidate existed: end with an empty filtered answer.
      const state = this.start(0, out);
      if (!state.finished) {
        out.push(this.chunk({ index: 0, delta: {}, finish_reason: 'content_filter' }));
        state.finished = true;
      }
    }
    if (res.usageMetadata) {
      this.usageValue = toUsage(res.usageMetadata);
      // Earlier events carry running counts; only the one at (or after) the finish is final.
      if (this.finished && !this.usageSent) {
        out.push({ ...this.chunk(undefined), usage: this.usageValue });
        this.usageSent = true;
      }
    }
    return out;
  }

  /** First sight of a candidate opens it with the role chunk. */
  private start(index: number, out: ChatChunk[]): CandidateState {
    let state = this.candidates.get(index);
    if (!state) {
      state = { toolCalls: 0, finished: false };
      this.candidates.set(index, state);
      out.push(this.chunk({ index, delta: { role: 'assistant', content: '' }, finish_reason: null }));
    }
    return state;
  }

  private chunk(choice: ChunkChoice | undefined): ChatChunk {
    const { id, created, model } = this.ctx;
    return { id, object: 'chat.completion.chunk', created, model, choices: choice ? [choice] : [] };
  }
}

export const chatStream = (ctx: StreamContext): StreamTranslator => new GeminiStreamTranslator(ctx);
