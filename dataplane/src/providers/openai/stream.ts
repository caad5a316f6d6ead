import type { ChatChunk, Usage } from '../../formats/openai/types.ts';
import type { SseEvent } from '../../formats/sse.ts';
import type { CompletionStreamEvent, StreamTranslator, UpstreamError } from '../types.ts';
import { isRecord, tryParseJson } from '../shared/retry-after.ts';
import { classifyOpenAIStreamError } from './errors.ts';
import { readUsage } from './response.ts';

/** OpenAI chunks are canonical already: parse, note finish/usage/errors, skip garbage. */
export class OpenAIStreamTranslator implements StreamTranslator {
  done = false;
  finished = false;
  usage: Usage | undefined;
  error: UpstreamError | undefined;
  skipped = 0;

  push(event: SseEvent): ChatChunk[] {
    if (event.data === '[DONE]') {
      this.done = true;
      return [];
    }
    const chunk = tryParseJson(event.data);
    if (!isRecord(chunk)) {
      this.skipped++;
      return [];
    }
    if (isRecord(chunk.error)) {
      this.error = classifyOpenAIStreamError(chunk.error);
      return [];
    }
    if (!Array.isArray(chunk.choices)) {
      this.skipped++;
      return [];
    }
    const usage = readUsage(chunk.usage);
    if (usage) this.usage = usage;
    for (const choice of chunk.choices) {
      if (isRecord(choice) && typeof choice.finish_reason === 'string') this.finished = true;
    }
    return [chunk as unknown as ChatChunk];
  }
}

/** No usage, no error, no text: an event that is not a JSON object (the `[DONE]` marker, garbage). */
const NOTHING: CompletionStreamEvent = { usage: undefined, error: undefined, text: '' };

/**
 * One event of a legacy completions stream, parsed once: its usage, an `{error: …}` event (the
 * stream's verdict on the deployment) and its first choice's text.
 */
export function completionsStreamEvent(data: string): CompletionStreamEvent {
  if (data === '[DONE]') return NOTHING;
  const chunk = tryParseJson(data);
  if (!isRecord(chunk)) return NOTHING;
  const first = (chunk.choices as { 0?: unknown } | null | undefined)?.[0];
  const text = isRecord(first) ? first.text : undefined;
  return {
    usage: readUsage(chunk.usage),
    error: isRecord(chunk.error) ? classifyOpenAIStreamError(chunk.error) : undefined,
    text: typeof text === 'string' ? text : '',
  };
}
