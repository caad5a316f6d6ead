/** Turns canonical chunks into the SSE dialect the client speaks. One instance per request. */
import type { GatewayError } from '../errors.ts';
import type { ChatChunk, Usage } from './openai/types.ts';

export interface ClientStreamEncoder {
  /** Text to write for one canonical chunk ('' when the dialect has nothing to say). */
  chunk(c: ChatChunk): string;
  /**
   * The stream completed: final usage and the dialect's end marker. `model` names every
   * model that served when a continuation changed it (dialects that carry it at the end).
   */
  finish(usage: Usage, model?: string): string;
  /** The stream cannot complete: an explicit error event and no end marker. */
  fail(error: GatewayError): string;
}
