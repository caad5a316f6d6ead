/** Anthropic Message → canonical chat.completion, plus the stop-reason and usage maps. */
import type { ChatCompletion, FinishReason, ToolCall, Usage } from '../../formats/openai/types.ts';
import type { ThinkingBlocks } from '../../formats/anthropic/types.ts';
import { isRecord } from '../../formats/anthropic/util.ts';

/**
 * `pause_turn` only happens with Anthropic server tools (never sent by Gantry): the turn is
 * over as far as the caller can tell. A context-window stop is a length stop.
 */
export function finishReason(stop: unknown): FinishReason | null {
  switch (stop) {
    case 'end_turn':
    case 'stop_sequence':
    case 'pause_turn':
      return 'stop';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      return null;
  }
}

const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);

/**
 * Anthropic's input_tokens excludes cache reads and cache writes, OpenAI's prompt_tokens
 * includes cached tokens: the three are summed so prompt_tokens means the same everywhere.
 */
export function toUsage(raw: unknown): Usage {
  const u = isRecord(raw) ? raw : {};
  const cacheRead = count(u['cache_read_input_tokens']);
  const prompt = count(u['input_tokens']) + cacheRead + count(u['cache_creation_input_tokens']);
  const completion = count(u['output_tokens']);
  const usage: Usage = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
  };
  if (cacheRead > 0) usage.prompt_tokens_details = { cached_tokens: cacheRead };
  const details = u['output_tokens_details'];
  if (isRecord(details) && typeof details['thinking_tokens'] === 'number') {
    usage.completion_tokens_details = { reasoning_tokens: details['thinking_tokens'] };
  }
  return usage;
}

/**
 * Whether Anthropic's usage says what the prompt cost: without `input_tokens` the prompt would
 * be billed as 0 tokens, so such a report (or none) is left out and the gateway counts.
 */
export const reportsUsage = (u: unknown): boolean => isRecord(u) && typeof u['input_tokens'] === 'number';

type Message = ChatCompletion['choices'][number]['message'] & { thinking_blocks?: ThinkingBlocks };

export function toChatCompletion(body: unknown, now: () => number = Date.now): ChatCompletion {
  // A plain Error: the router's decode step blames the deployment and fails over (a
  // GatewayError would read as the gateway's own refusal, ending the request there).
  if (!isRecord(body) || !Array.isArray(body['content'])) {
    throw new Error('Anthropic returned a response without a content array');
  }
  const texts: string[] = [];
  const thoughts: string[] = [];
  const thinkingBlocks: ThinkingBlocks = [];
  const toolCalls: ToolCall[] = [];
  for (const block of body['content'] as unknown[]) {
    if (!isRecord(block)) continue;
    if (block['type'] === 'text' && typeof block['text'] === 'string') texts.push(block['text']);
    else if (block['type'] === 'tool_use') {
      toolCalls.push({
        id: String(block['id'] ?? ''),
        type: 'function',
        function: { name: String(block['name'] ?? ''), arguments: JSON.stringify(block['input'] ?? {}) },
      });
    } else if (block['type'] === 'thinking' && typeof block['thinking'] === 'string') {
      thoughts.push(block['thinking']);
      thinkingBlocks.push({
        type: 'thinking',
        thinking: block['thinking'],
        signature: String(block['signature'] ?? ''),
      });
    } else if (block['type'] === 'redacted_thinking' && typeof block['data'] === 'string') {
      thinkingBlocks.push({ type: 'redacted_thinking', data: block['data'] });
    }
    // Server-tool blocks (web search results, ...) have no canonical form and are skipped.
  }

  // Adjacent text blocks are one text split around citations: joined without a separator.
  const message: Message = { role: 'assistant', content: texts.length > 0 ? texts.join('') : null };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  if (thoughts.length > 0) message.reasoning_content = thoughts.join('\n\n');
  if (thinkingBlocks.length > 0) message.thinking_blocks = thinkingBlocks;
  if (body['stop_reason'] === 'refusal') message.refusal = texts.join('') || 'The model refused to answer.';

  return {
    id: typeof body['id'] === 'string' ? body['id'] : '',
    object: 'chat.completion',
    created: Math.floor(now() / 1000),
    model: typeof body['model'] === 'string' ? body['model'] : '',
    choices: [{ index: 0, message, finish_reason: finishReason(body['stop_reason']) ?? 'stop' }],
    // No usage reported is not zero usage: left out, the gateway counts the tokens itself.
    ...(reportsUsage(body['usage']) && { usage: toUsage(body['usage']) }),
  };
}
