/**
 * The TWEAK band: a cheaper model rewrites a cached answer for a new, closely related
 * question. This builds that call and estimates its size before it runs, so the cost rule
 * (economics.ts `tweakWorthIt`) can decline it first.
 */
import { estimatePromptTokens, estimateTextTokens } from '../../accounting/tokens.ts';
import type { ChatRequest } from '../../formats/openai/types.ts';
import type { CacheEntry } from '../../stores/cache-entries/types.ts';
import type { TokenCount } from './economics.ts';

const INSTRUCTIONS =
  'You adapt an earlier answer to a new question that is closely related to the earlier one. ' +
  'Keep everything in the earlier answer that still applies, its language, format and tone; ' +
  'change only what the new question requires. Reply with the adapted answer alone.';

/** Room for the adapted answer to grow a little beyond the original. */
const GROWTH = 1.25;
const MIN_COMPLETION_TOKENS = 64;

const answerText = (entry: CacheEntry): string => entry.response.choices[0]?.message.content ?? '';

export function tweakRequest(
  entry: CacheEntry,
  query: string,
  tweakModel: string,
  req: ChatRequest,
): ChatRequest {
  const limit = Math.max(MIN_COMPLETION_TOKENS, Math.ceil(entry.completionTokens * GROWTH));
  const requested = req.max_completion_tokens ?? req.max_tokens;
  return {
    model: tweakModel,
    messages: [
      { role: 'system', content: INSTRUCTIONS },
      {
        role: 'user',
        content: `Earlier question:\n${entry.query}\n\nEarlier answer:\n${answerText(entry)}\n\nNew question:\n${query}`,
      },
    ],
    max_tokens: requested === undefined ? limit : Math.min(limit, requested),
    stream: false,
  };
}

/** The adaptation call's estimated size: its prompt, and an answer about as long as the cached one. */
export function estimateTweakTokens(tweak: ChatRequest, entry: CacheEntry): TokenCount {
  const answer = Math.max(entry.completionTokens, estimateTextTokens(answerText(entry)));
  return {
    promptTokens: estimatePromptTokens(tweak),
    completionTokens: Math.min(answer, tweak.max_tokens ?? answer),
  };
}
