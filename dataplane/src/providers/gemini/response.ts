/** Gemini GenerateContentResponse → canonical chat.completion. */
import { randomUUID } from 'node:crypto';
import type {
  ChatChoice,
  ChatCompletion,
  FinishReason,
  ToolCall,
  Usage,
} from '../../formats/openai/types.ts';
import type { UpstreamTarget } from '../types.ts';
import { isRecord } from '../shared/retry-after.ts';
import { numberOr } from './json.ts';
import type { GeminiCandidate, GeminiGenerateResponse, GeminiPart, GeminiUsageMetadata } from './wire.ts';

const FILTERED = new Set([
  'SAFETY',
  'RECITATION',
  'BLOCKLIST',
  'PROHIBITED_CONTENT',
  'SPII',
  'IMAGE_SAFETY',
  'IMAGE_PROHIBITED_CONTENT',
]);

/**
 * Gemini finish reason → canonical. Gemini says STOP even when it stopped to call a
 * function, so `hasToolCalls` turns that into `tool_calls`. Reasons with no OpenAI
 * counterpart (OTHER, MALFORMED_FUNCTION_CALL, ...) end as a plain `stop`.
 */
export function mapFinishReason(reason: string, hasToolCalls: boolean): FinishReason {
  if (reason === 'MAX_TOKENS') return 'length';
  if (FILTERED.has(reason)) return 'content_filter';
  return hasToolCalls ? 'tool_calls' : 'stop';
}

/** Gemini counts thinking apart from candidates; OpenAI bills it inside completion tokens. */
export function toUsage(meta: GeminiUsageMetadata): Usage {
  const prompt = numberOr(meta.promptTokenCount, 0) + numberOr(meta.toolUsePromptTokenCount, 0);
  const thoughts = numberOr(meta.thoughtsTokenCount, 0);
  const completion = numberOr(meta.candidatesTokenCount, 0) + thoughts;
  const usage: Usage = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: numberOr(meta.totalTokenCount, prompt + completion),
  };
  const cached = numberOr(meta.cachedContentTokenCount, 0);
  if (cached > 0) usage.prompt_tokens_details = { cached_tokens: cached };
  if (thoughts > 0) usage.completion_tokens_details = { reasoning_tokens: thoughts };
  return usage;
}

export const partsOf = (candidate: GeminiCandidate): GeminiPart[] =>
  Array.isArray(candidate.content?.parts) ? candidate.content.parts : [];

/** Gemini issues no call ids; the canonical format needs one per call, unique per answer. */
export const toolCallId = (n: number): string => `call_${n}`;

export function chatResponse(body: unknown, target: UpstreamTarget): ChatCompletion {
  if (!isRecord(body))
    // Plain Errors: a malformed answer is the deployment's fault, failed over by the router.
    throw new Error('Gemini returned a response that is not an object');
  const res = body as GeminiGenerateResponse;
  const completion: ChatCompletion = {
    id: `chatcmpl-${res.responseId ?? randomUUID()}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: res.modelVersion ?? target.upstreamModel,
    choices: [],
  };
  const candidates = Array.isArray(res.candidates) ? res.candidates : [];
  let calls = 0;
  candidates.forEach((candidate, i) => {
    const choice = toChoice(candidate, candidate.index ?? i, calls);
    calls += choice.message.tool_calls?.length ?? 0;
    completion.choices.push(choice);
  });
  if (completion.choices.length === 0) {
    // No candidate because the prompt itself was refused: an empty, filtered answer.
    if (res.promptFeedback?.blockReason === undefined) {
      throw new Error('Gemini returned a response without candidates');
    }
    completion.choices.push({
      index: 0,
      message: { role: 'assistant', content: '' },
      finish_reason: 'content_filter',
    });
  }
  if (res.usageMetadata) completion.usage = toUsage(res.usageMetadata);
  return completion;
}

function toChoice(candidate: GeminiCandidate, index: number, firstCall: number): ChatChoice {
  let text = '';
  let reasoning = '';
  const toolCalls: ToolCall[] = [];
  for (const part of partsOf(candidate)) {
    if (part.functionCall) {
      toolCalls.push({
        id: toolCallId(firstCall + toolCalls.length),
        type: 'function',
        function: { name: part.functionCall.name, arguments: JSON.stringify(part.functionCall.args ?? {}) },
      });
    } else if (typeof part.text === 'string') {
      if (part.thought === true) reasoning += part.text;
      else text += part.text;
    }
  }
  const message: ChatChoice['message'] = {
    role: 'assistant',
    content: text !== '' || toolCalls.length === 0 ? text : null,
  };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  if (reasoning !== '') message.reasoning_content = reasoning;
  return {
    index,
    message,
    finish_reason: mapFinishReason(candidate.finishReason ?? 'STOP', toolCalls.length > 0),
  };
}
