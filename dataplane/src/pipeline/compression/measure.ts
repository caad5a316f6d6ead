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

/** What `estimateMessageTokens` adds per message and per image part. */
const MESSAGE_OVERHEAD = 4;
const IMAGE_TOKENS = 85;

/**
 * Characters that count as tokens, without the tokenizer: a BPE token is at least one
 * character, so `chars` bounds the real count from above, and `chars / 4` is the usual
 * estimate. Lets the gate pass a short request without loading the 70 MB tokenizer.
 */
export function cheapCount(req: Pick<ChatRequest, 'messages' | 'tools'>): {
  upper: number;
  estimate: number;
} {
  let chars = 0;
  let fixed = 0;
  for (const m of req.messages) {
    fixed += MESSAGE_OVERHEAD;
    if (typeof m.content === 'string') chars += m.content.length;
    else if (Array.isArray(m.content))
      for (const part of m.content) {
        if (part.type === 'text' && typeof part.text === 'string') chars += part.text.length;
        else if (part.type === 'image_url') fixed += IMAGE_TOKENS;
      }
    for (const c of m.tool_calls ?? []) chars += c.function.name.length + c.function.arguments.length;
  }
  if (req.tools) chars += JSON.stringify(req.tools).length;
  return { upper: chars + fixed, estimate: Math.ceil(chars / 4) + fixed };
}
