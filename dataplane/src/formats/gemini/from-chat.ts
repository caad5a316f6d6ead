/** A canonical chat completion → the GenerateContentResponse a Gemini client reads. */
import type { ChatChoice, ChatCompletion, FinishReason, Usage } from '../openai/types.ts';
import type {
  GeminiCandidate,
  GeminiGenerateResponse,
  GeminiPart,
  GeminiUsageMetadata,
} from '../../providers/gemini/wire.ts';

export const FINISH: Record<FinishReason, string> = {
  stop: 'STOP',
  tool_calls: 'STOP',
  function_call: 'STOP',
  length: 'MAX_TOKENS',
  content_filter: 'SAFETY',
};

export function parseArgs(json: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(json);
    return typeof v === 'object' && v !== null && !Array.isArray(v)
      ? (v as Record<string, unknown>)
      : { value: v };
  } catch {
    // A model that wrote broken arguments: hand them over as text rather than lose them.
    return { arguments: json };
  }
}

function candidate(choice: ChatChoice): GeminiCandidate {
  const m = choice.message;
  const parts: GeminiPart[] = [];
  if (typeof m.reasoning_content === 'string' && m.reasoning_content !== '')
    parts.push({ text: m.reasoning_content, thought: true });
  if (typeof m.content === 'string' && m.content !== '') parts.push({ text: m.content });
  for (const call of m.tool_calls ?? [])
    parts.push({ functionCall: { name: call.function.name, args: parseArgs(call.function.arguments) } });
  return {
    content: { role: 'model', parts },
    finishReason: FINISH[choice.finish_reason ?? 'stop'] ?? 'STOP',
    index: choice.index,
  };
}

/** Gemini counts thinking apart from the candidates; OpenAI folds it into completion tokens. */
export function usageMetadata(usage: Usage): GeminiUsageMetadata {
  const thoughts = usage.completion_tokens_details?.reasoning_tokens ?? 0;
  const meta: GeminiUsageMetadata = {
    promptTokenCount: usage.prompt_tokens,
    candidatesTokenCount: Math.max(0, usage.completion_tokens - thoughts),
    totalTokenCount: usage.prompt_tokens + usage.completion_tokens,
  };
  if (thoughts > 0) meta.thoughtsTokenCount = thoughts;
  const cached = usage.prompt_tokens_details?.cached_tokens ?? 0;
  if (cached > 0) meta.cachedContentTokenCount = cached;
  return meta;
}

export function chatToGemini(completion: ChatCompletion, usage: Usage): GeminiGenerateResponse {
  return {
    candidates: completion.choices.map(candidate),
    usageMetadata: usageMetadata(usage),
    modelVersion: completion.model,
    responseId: completion.id.replace(/^chatcmpl-/, ''),
  };
}
