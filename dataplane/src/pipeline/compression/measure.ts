/**
 * Per-message token counts with the real tokenizer, counted once per request (the
 * tokenizer remembers long texts, so admission's count or the previous turn's makes this
 * one cheap).
 */
import { estimateMessageTokens, estimateTextTokens } from '../../accounting/tokens.ts';
import type { ChatMessage, ChatRequest } from '../../formats/openai/types.ts';
import type { Measured } from './types.ts';

export const messageTokens = (m: ChatMessage): number => estimateMessageTokens(m);

export function measure(messages: readonly ChatMessage[]): Measured[] {
  return messages.map((message) => ({ message, tokens: estimateMessageTokens(message) }));
}

/** Tokens the request's tool definitions add on top of its messages. */
export function toolTokens(req: Pick<ChatRequest, 'tools'>): number {
  return req.tools ? estimateTextTokens(JSON.stringify(req.tools)) : 0;
}
