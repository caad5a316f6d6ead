/**
 * A cached answer replayed as a stream, in the same canonical chunks a live stream yields,
 * so clients read hits and misses with the same code (and the same encoders).
 */
import type { ChatChunk, ChatCompletion } from '../../formats/openai/types.ts';

/** Word-sized pieces, whitespace kept with the word it precedes, as providers stream. */
export function splitForStream(text: string): string[] {
  return text.match(/\s*\S+|\s+$/g) ?? (text === '' ? [] : [text]);
}

export function* replayChunks(
  completion: ChatCompletion,
  meta: { id: string; created: number; model: string },
): Generator<ChatChunk> {
  const base = {
    id: meta.id,
    object: 'chat.completion.chunk' as const,
    created: meta.created,
    model: meta.model,
  };
  for (const choice of completion.choices) {
    yield {
      ...base,
      choices: [{ index: choice.index, delta: { role: 'assistant', content: '' }, finish_reason: null }],
    };
    for (const piece of splitForStream(choice.message.content ?? ''))
      yield { ...base, choices: [{ index: choice.index, delta: { content: piece }, finish_reason: null }] };
    yield {
      ...base,
      choices: [{ index: choice.index, delta: {}, finish_reason: choice.finish_reason ?? 'stop' }],
    };
  }
}

/**
 * The replay in steps of at most `size` chunks: the stream writer sends a step as one write
 * and waits for a slow client between steps, so a long cached answer is never held whole in
 * the socket's buffer (one chunk per word grows ~30x as events).
 */
export function* replaySteps(
  completion: ChatCompletion,
  meta: { id: string; created: number; model: string },
  size = REPLAY_STEP_CHUNKS,
): Generator<ChatChunk[]> {
  let step: ChatChunk[] = [];
  for (const chunk of replayChunks(completion, meta)) {
    step.push(chunk);
    if (step.length === size) {
      yield step;
      step = [];
    }
  }
  if (step.length > 0) yield step;
}

/** About 10 KB of events for word-sized pieces: under a socket's 16 KB high-water mark. */
export const REPLAY_STEP_CHUNKS = 64;
