/**
 * A provider's token report, believed only when it is a count a request can have. Usage comes
 * from the upstream's body, a field like any other: a negative count made an answer free (or
 * its record negative), 1e300 tokens charged $1e294 and broke the usage record's write. An
 * unbelievable report is treated as no report, so the gateway's own count bills the request.
 */
import type { Usage } from '../formats/openai/types.ts';
import { isRecord } from '../providers/shared/retry-after.ts';

/**
 * Most tokens one call is billed for: a hundred times the largest context windows offered
 * (1-10 M tokens), so no real report is refused and no corrupt one becomes a real bill.
 */
export const MAX_REPORTED_TOKENS = 1_000_000_000;

export const isTokenCount = (n: unknown): n is number =>
  typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 && n <= MAX_REPORTED_TOKENS;

/**
 * The report as Usage when its prompt and completion counts are believable (completion may be
 * absent, as in embeddings: 0), with the total recomputed from them; undefined otherwise. A
 * cached or reasoning count that does not fit inside its parent is dropped, the report kept.
 */
export function believableUsage(raw: unknown): Usage | undefined {
  if (!isRecord(raw)) return undefined;
  const prompt = raw.prompt_tokens;
  const completion = raw.completion_tokens ?? 0;
  if (!isTokenCount(prompt) || !isTokenCount(completion)) return undefined;
  const usage = { ...raw, prompt_tokens: prompt, completion_tokens: completion } as Usage;
  usage.total_tokens = prompt + completion;
  const cached = isRecord(raw.prompt_tokens_details) ? raw.prompt_tokens_details.cached_tokens : undefined;
  if (cached !== undefined && !(isTokenCount(cached) && cached <= prompt)) {
    usage.prompt_tokens_details = { ...(raw.prompt_tokens_details as object) };
    delete usage.prompt_tokens_details.cached_tokens;
  }
  const details = raw.completion_tokens_details;
  const reasoning = isRecord(details) ? details.reasoning_tokens : undefined;
  if (reasoning !== undefined && !(isTokenCount(reasoning) && reasoning <= completion)) {
    usage.completion_tokens_details = { ...(details as object) };
    delete usage.completion_tokens_details.reasoning_tokens;
  }
  return usage;
}
