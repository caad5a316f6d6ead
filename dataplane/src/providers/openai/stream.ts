import type { ChatChunk, Usage } from '../../formats/openai/types.ts';
import type { SseEvent } from '../../formats/sse.ts';
import type { StreamTranslator, UpstreamError } from '../types.ts';
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

/** An `{error: …}` event of a legacy completions stream (its verdict on the deployment). */
export function completionsStreamError(event: SseEvent): UpstreamError | undefined {
  if (event.data === '[DONE]') return undefined;
  const chunk = tryParseJson(event.data);
  return isRecord(chunk) && isRecord(chunk.error) ? classifyOpenAIStreamError(chunk.error) : undefined;
}

/** Legacy completions streams are forwarded as they are; only usage matters to us. */
export function completionsStreamUsage(event: SseEvent): Usage | undefined {
  if (event.data === '[DONE]') return undefined;
  const chunk = tryParseJson(event.data);
  return isRecord(chunk) ? readUsage(chunk.usage) : undefined;
}
