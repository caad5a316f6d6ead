import type {
  ChatCompletion,
  CompletionResponse,
  EmbeddingResponse,
  Usage,
} from '../../formats/openai/types.ts';
import { isRecord } from '../shared/retry-after.ts';

/** OpenAI-style upstreams already speak the canonical format; check the shape, keep the rest. */
export function chatResponse(body: unknown): ChatCompletion {
  if (!isRecord(body) || !Array.isArray(body.choices) || body.choices.length === 0)
    throw new Error('upstream chat response has no choices');
  // Every later stage reads choices[i].message: a choice without one is a malformed answer
  // (failed over), not a crash inside the gateway.
  if (!body.choices.every((c) => isRecord(c) && isRecord(c.message)))
    throw new Error('upstream chat response has a choice without a message');
  return body as unknown as ChatCompletion;
}

export function completionsResponse(body: unknown): CompletionResponse {
  if (!isRecord(body) || !Array.isArray(body.choices)) throw new Error('upstream completion has no choices');
  return body as unknown as CompletionResponse;
}

export function embeddingsResponse(body: unknown): EmbeddingResponse {
  if (!isRecord(body) || !Array.isArray(body.data))
    throw new Error('upstream embeddings response has no data');
  const usage = isRecord(body.usage) ? body.usage : {};
  const prompt = typeof usage.prompt_tokens === 'number' ? usage.prompt_tokens : 0;
  return {
    ...(body as unknown as EmbeddingResponse),
    usage: {
      prompt_tokens: prompt,
      total_tokens: typeof usage.total_tokens === 'number' ? usage.total_tokens : prompt,
    },
  };
}

export function readUsage(value: unknown): Usage | undefined {
  if (!isRecord(value) || typeof value.prompt_tokens !== 'number') return undefined;
  return value as unknown as Usage;
}
