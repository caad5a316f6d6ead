/** The text a message carries, for profiling, scoring and keyword matching (not for tokens). */
import type { ChatMessage } from '../../formats/openai/types.ts';

export function messageText(m: ChatMessage): string {
  let text = '';
  if (typeof m.content === 'string') text = m.content;
  else if (Array.isArray(m.content)) {
    for (const part of m.content)
      if (part.type === 'text' && typeof part.text === 'string') text += (text ? '\n' : '') + part.text;
  }
  for (const call of m.tool_calls ?? []) text += `\n${call.function.name} ${call.function.arguments}`;
  return text;
}
