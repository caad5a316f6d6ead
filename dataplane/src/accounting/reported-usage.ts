/**
 * A provider's token report, believed only when it is a count a request can have. Usage comes
 * from the upstream's body, a field like any other: a negative count made an answer free (or
 * its record negative), 1e300 tokens charged $1e294 and broke the usage record's write. An
 * unbelievable report is treated as no report, so the gateway's own count bills the request.
 */
import type { Deployment } from '../config/snapshot.ts';
import type { Usage } from '../formats/openai/types.ts';
import { isRecord } from '../providers/shared/retry-after.ts';
import type { OutputBound } from './estimate.ts';

/**
 * Most tokens one call is billed for: a hundred times the largest context windows offered
 * (1-10 M tokens), so no real report is refused and no corrupt one becomes a real bill.
 */
export const MAX_REPORTED_TOKENS = 1_000_000_000;

export const isTokenCount = (n: unknown): n is number =>
  typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 && n <= MAX_REPORTED_TOKENS;

/**
 * The report as Usage when its prompt and completion counts are believable, with the total
 * recomputed from them; undefined otherwise. Both counts are required: a chat report without
 * `completion_tokens` billed the answer as 0 output tokens (embeddings, which have none, do
 * not come here). A cached or reasoning count that does not fit inside its parent is dropped,
 * the report kept.
 */
export function believableUsage(raw: unknown): Usage | undefined {
  if (!isRecord(raw)) return undefined;
  const prompt = raw.prompt_tokens;
  const completion = raw.completion_tokens;
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

/**
 * Most output tokens believed per generated sequence when neither the request (`max_tokens`)
 * nor the deployment (`maxOutputTokens`) bounds it: above the longest outputs offered today.
 */
export const MAX_UNBOUNDED_OUTPUT_TOKENS = 262_144;

/** What the request tells about the size of its usage. */
export interface UsageBounds {
  /** The gateway's own count of the prompt. */
  promptTokens: number;
  output: OutputBound;
  deployment: Pick<Deployment, 'contextWindow' | 'maxOutputTokens'>;
  /** The answer has content (text, tool calls): a report of 0 output tokens is then no report. */
  answered: boolean;
}

/**
 * The most prompt and completion tokens a request can be billed for. Without a context window
 * the prompt is bounded only by the sanity cap: the gateway's own count is too rough to bound
 * a real one (images at a flat 85 tokens, response_format schemas and completions' `suffix`
 * not counted), and a ceiling built on it billed a 48,175-token image prompt as 4,856.
 */
export function usageCeilings(b: UsageBounds): { prompt: number; completion: number } {
  const sequences = Math.max(1, b.output.sequences ?? 1);
  const perSequence = b.output.maxTokens ?? b.deployment.maxOutputTokens ?? MAX_UNBOUNDED_OUTPUT_TOKENS;
  return {
    prompt: Math.min(b.deployment.contextWindow ?? MAX_REPORTED_TOKENS, MAX_REPORTED_TOKENS),
    completion: Math.min(perSequence * sequences, MAX_REPORTED_TOKENS),
  };
}

/**
 * A believable report held against the request it answers. No count above what the request
 * could have used is billed: a corrupt 1e9 output tokens for `max_tokens: 5` billed $600,000 at
 * $600/M; over its ceiling a count is cut to it (the most the caller agreed to). A report of 0
 * prompt tokens for a prompt, or 0 output tokens for an answer with content, made the request
 * free: it is no report (undefined), and the gateway's own count bills.
 */
export function boundedUsage(usage: Usage, b: UsageBounds): Usage | undefined {
  if (usage.prompt_tokens === 0 && b.promptTokens > 0) return undefined;
  if (usage.completion_tokens === 0 && b.answered) return undefined;
  const ceiling = usageCeilings(b);
  if (usage.prompt_tokens <= ceiling.prompt && usage.completion_tokens <= ceiling.completion) return usage;
  // Through believableUsage again: cached and reasoning counts must still fit inside the cut ones.
  return believableUsage({
    ...usage,
    prompt_tokens: Math.min(usage.prompt_tokens, ceiling.prompt),
    completion_tokens: Math.min(usage.completion_tokens, ceiling.completion),
  });
}

/** A prompt count reported before a stream was cut, when believable for the request. */
export function boundedPromptTokens(reported: number | undefined, b: UsageBounds): number | undefined {
  if (reported === undefined || !isTokenCount(reported) || (reported === 0 && b.promptTokens > 0))
    return undefined;
  return Math.min(reported, usageCeilings(b).prompt);
}
