/**
 * Reasoning-effort injection in the canonical request. Only OpenAI's `reasoning_effort` is
 * set here; each provider adapter translates it into its own form (Anthropic thinking
 * budget, Gemini thinkingConfig), so the pipeline never branches on provider.
 */
import type { ChatRequest } from '../../formats/openai/types.ts';

/**
 * Returns the request with `reasoning_effort` set when the target model reasons (its
 * capabilities include `reasoning`). The input is never mutated. A request that already
 * names an effort keeps it: the client's explicit choice wins over the tenant's default.
 * For a model that does not reason the request is returned unchanged.
 */
export function injectReasoningEffort(req: ChatRequest, effort: string, reasons: boolean): ChatRequest {
  if (!reasons || effort === '' || req.reasoning_effort !== undefined) return req;
  return { ...req, reasoning_effort: effort };
}
