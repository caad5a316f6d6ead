/**
 * Token estimates for when a provider reports no usage (so nothing is ever counted as
 * zero). A character heuristic for now; the money issue replaces it with a real tokenizer.
 */
import type { ChatMessage, ChatRequest, Usage } from '../formats/openai/types.ts';

const CHARS_PER_TOKEN = 4;
const IMAGE_TOKENS = 85;
const MESSAGE_OVERHEAD = 4;

export const estimateTextTokens = (text: string): number => Math.ceil(text.length / CHARS_PER_TOKEN);

export function estimateMessageTokens(m: ChatMessage): number {
  let tokens = MESSAGE_OVERHEAD;
  if (typeof m.content === 'string') tokens += estimateTextTokens(m.content);
  else if (Array.isArray(m.content)) {
    for (const part of m.content) {
      if (part.type === 'text' && typeof part.text === 'string') tokens += estimateTextTokens(part.text);
      else if (part.type === 'image_url') tokens += IMAGE_TOKENS;
    }
  }
  for (const call of m.tool_calls ?? []) tokens += estimateTextTokens(call.function.name + call.function.arguments);
  return tokens;
}

export function estimatePromptTokens(req: ChatRequest): number {
  let tokens = 0;
  for (const m of req.messages) tokens += estimateMessageTokens(m);
  if (req.tools) tokens += estimateTextTokens(JSON.stringify(req.tools));
  return tokens;
}

export function estimatedUsage(req: ChatRequest, completionText: string): Usage {
  const prompt = estimatePromptTokens(req);
  const completion = estimateTextTokens(completionText);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}
