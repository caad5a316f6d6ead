/**
 * Which answers are stored, and which stored answer may serve which request. Both are about
 * the answer's shape, which the partition key does not cover: length limits vary per
 * request, and only a complete text answer is worth replaying.
 */
import { estimatePromptTokens } from '../../accounting/tokens.ts';
import { newId } from '../../stores/ids.ts';
import type { ChatCompletion, ChatRequest } from '../../formats/openai/types.ts';
import type { CacheEntry } from '../../stores/cache-entries/types.ts';
import type { CacheKeyParts } from './key.ts';

/** The completion limit a request sets, if any (max_completion_tokens wins, as upstream). */
export const requestMaxTokens = (
  req: Pick<ChatRequest, 'max_tokens' | 'max_completion_tokens'>,
): number | undefined => req.max_completion_tokens ?? req.max_tokens;

/**
 * Only plain text answers are stored: every choice has text content and ended with `stop`
 * or `length` (no tool calls, no content filter, no refusal).
 */
export function isStorable(response: ChatCompletion): boolean {
  if (response.choices.length === 0) return false;
  return response.choices.every(
    (c) =>
      (c.finish_reason === 'stop' || c.finish_reason === 'length') &&
      typeof c.message.content === 'string' &&
      (c.message.tool_calls === undefined || c.message.tool_calls.length === 0) &&
      (c.message.refusal === undefined || c.message.refusal === null),
  );
}

/**
 * Whether an entry may answer a request. A complete answer serves any request whose limit it
 * fits; an answer cut at its limit (`length`) only serves a request with that same limit —
 * with a larger one the client would get less than asked for, with a smaller one more.
 */
export function entryServes(
  entry: Pick<CacheEntry, 'completionTokens' | 'maxTokens' | 'response'>,
  req: ChatRequest,
): boolean {
  const limit = requestMaxTokens(req);
  if (isCut(entry.response)) return limit === entry.maxTokens;
  return limit === undefined || entry.completionTokens <= limit;
}

/** An answer stopped by its request's output cap. */
export const isCut = (response: ChatCompletion): boolean =>
  response.choices.some((c) => c.finish_reason === 'length');

/**
 * Whether a fresh answer takes its request's exact digest from the entry holding it (the newest
 * answer wins) — except that a cut answer never displaces a complete one: the cut one serves
 * only its own limit, the complete one every limit it fits, so one low-`max_tokens` request
 * would otherwise send every later request of that text through the embedder. The displaced
 * complete answer still stays reachable by meaning; this keeps it reachable by digest too.
 */
export function takesExactDigest(fresh: ChatCompletion, held: ChatCompletion | undefined): boolean {
  return held === undefined || !isCut(fresh) || isCut(held);
}

export interface BuildEntryInput {
  parts: CacheKeyParts;
  req: ChatRequest;
  response: ChatCompletion;
  /** ms since the epoch. */
  now: number;
  ttlSeconds: number;
  meta?: string | undefined;
  id?: string;
}

/** The entry for a fresh answer; its token counts come from the answer's usage (estimated without one). */
export function buildCacheEntry(input: BuildEntryInput): CacheEntry {
  const usage = input.response.usage;
  const completionTokens =
    usage?.completion_tokens ??
    Math.ceil(input.response.choices.reduce((n, c) => n + (c.message.content?.length ?? 0), 0) / 4);
  return {
    id: input.id ?? newId(),
    partition: input.parts.partition,
    createdAt: input.now,
    expiresAt: input.now + input.ttlSeconds * 1000,
    query: input.parts.query,
    response: input.response,
    promptTokens: usage?.prompt_tokens ?? estimatePromptTokens(input.req),
    completionTokens,
    maxTokens: requestMaxTokens(input.req),
    meta: input.meta,
  };
}
