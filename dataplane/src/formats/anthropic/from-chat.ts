/** Canonical chat.completion → Anthropic Message, the answer of Gantry's `POST /v1/messages`. */
import type { ChatCompletion, FinishReason, Usage } from '../openai/types.ts';
import type {
  AnthropicMessage,
  AnthropicResponseBlock,
  AnthropicStopReason,
  AnthropicUsage,
} from './types.ts';
import { isRecord, toolInput } from './util.ts';

/**
 * OpenAI does not say whether a stop sequence or the model ended the turn, so `stop` is
 * `end_turn`; an unknown or missing reason is too, since an Anthropic message always has one.
 */
export function stopReasonOf(finish: FinishReason | null | undefined): AnthropicStopReason {
  switch (finish) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return 'end_turn';
  }
}

/** Inverse of the Anthropic adapter's usage map: Anthropic's input_tokens excludes cache reads. */
export function anthropicUsageOf(usage: Usage | null | undefined): AnthropicUsage {
  const cached = usage?.prompt_tokens_details?.cached_tokens ?? 0;
  const out: AnthropicUsage = {
    input_tokens: Math.max(0, (usage?.prompt_tokens ?? 0) - cached),
    output_tokens: usage?.completion_tokens ?? 0,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: cached,
  };
  const reasoning = usage?.completion_tokens_details?.reasoning_tokens;
  if (reasoning !== undefined) out.output_tokens_details = { thinking_tokens: reasoning };
  return out;
}

/** `msg_` ids are what Anthropic clients expect; the canonical id is reused, not invented. */
export function messageId(id: string): string {
  if (id.startsWith('msg_')) return id;
  const core = id.replace(/^chatcmpl-/, '');
  return `msg_${core === '' ? Date.now().toString(36) : core}`;
}

/**
 * Thinking blocks: the signed originals when an Anthropic upstream supplied them, otherwise
 * the reasoning text as one unsigned block (the client sees the reasoning; Gantry's
 * Anthropic adapter drops unsigned blocks if the client sends them back).
 */
function thinkingBlocks(message: ChatCompletion['choices'][number]['message']): AnthropicResponseBlock[] {
  const carried = (message as Record<string, unknown>)['thinking_blocks'];
  if (Array.isArray(carried)) {
    const blocks: AnthropicResponseBlock[] = [];
    for (const block of carried as unknown[]) {
      if (!isRecord(block)) continue;
      if (block['type'] === 'thinking' && typeof block['thinking'] === 'string') {
        blocks.push({
          type: 'thinking',
          thinking: block['thinking'],
          signature: String(block['signature'] ?? ''),
        });
      } else if (block['type'] === 'redacted_thinking' && typeof block['data'] === 'string') {
        blocks.push({ type: 'redacted_thinking', data: block['data'] });
      }
    }
    if (blocks.length > 0) return blocks;
  }
  const reasoning = message.reasoning_content;
  return typeof reasoning === 'string' && reasoning !== ''
    ? [{ type: 'thinking', thinking: reasoning, signature: '' }]
    : [];
}

export function chatToMessages(completion: ChatCompletion, requestedModel: string): AnthropicMessage {
  const choice = completion.choices[0];
  const content: AnthropicResponseBlock[] = [];
  const id = messageId(completion.id);
  if (choice !== undefined) {
    const message = choice.message;
    content.push(...thinkingBlocks(message));
    const text = typeof message.content === 'string' ? message.content : (message.refusal ?? '');
    if (text !== '') content.push({ type: 'text', text });
    (message.tool_calls ?? []).forEach((call, i) => {
      // Anthropic clients echo the id in tool_result; it must exist and be unique.
      const callId = call.id !== '' ? call.id : `toolu_${id.slice(4)}_${i}`;
      content.push({
        type: 'tool_use',
        id: callId,
        name: call.function.name,
        input: toolInput(call.function.arguments),
      });
    });
  }
  return {
    id,
    type: 'message',
    role: 'assistant',
    model: requestedModel,
    content,
    stop_reason: stopReasonOf(choice?.finish_reason),
    stop_sequence: null,
    usage: anthropicUsageOf(completion.usage),
  };
}
