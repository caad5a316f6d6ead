/** Chat completions → the interaction object. Pure. */
import type { ChatCompletion, ChatMessage, FinishReason, ToolCall, Usage } from '../openai/types.ts';
import type { Interaction, InteractionContent, InteractionStatus, InteractionUsage } from './types.ts';

export interface InteractionFrame {
  id: string;
  model: string;
  createdAt: number;
  previousId?: string | undefined;
}

export function interactionUsage(u: Usage): InteractionUsage {
  return {
    total_input_tokens: u.prompt_tokens,
    total_output_tokens: u.completion_tokens,
    total_tokens: u.prompt_tokens + u.completion_tokens,
    ...(u.prompt_tokens_details?.cached_tokens !== undefined && {
      total_cached_tokens: u.prompt_tokens_details.cached_tokens,
    }),
    ...(u.completion_tokens_details?.reasoning_tokens !== undefined && {
      total_thought_tokens: u.completion_tokens_details.reasoning_tokens,
    }),
  };
}

/** Arguments as an object; a model's malformed JSON is kept under `_raw` rather than lost. */
export function callArguments(json: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(json === '' ? '{}' : json);
    return typeof v === 'object' && v !== null && !Array.isArray(v)
      ? (v as Record<string, unknown>)
      : { _raw: json };
  } catch {
    return { _raw: json };
  }
}

export function outputsOf(
  text: string | null | undefined,
  calls: readonly ToolCall[] | undefined,
): InteractionContent[] {
  const out: InteractionContent[] = [];
  if (text) out.push({ type: 'text', text });
  for (const c of calls ?? [])
    out.push({
      type: 'function_call',
      id: c.id,
      name: c.function.name,
      arguments: callArguments(c.function.arguments),
    });
  return out;
}

export const statusOf = (finish: FinishReason | null | undefined): InteractionStatus =>
  finish === 'tool_calls' ? 'requires_action' : 'completed';

export function interactionObject(
  frame: InteractionFrame,
  status: InteractionStatus,
  outputs: InteractionContent[],
  usage: Usage | undefined,
): Interaction {
  const created = new Date(frame.createdAt).toISOString();
  return {
    id: frame.id,
    object: 'interaction',
    model: frame.model,
    role: 'model',
    status,
    outputs,
    ...(usage && { usage: interactionUsage(usage) }),
    created,
    updated: status === 'in_progress' ? created : new Date().toISOString(),
    ...(frame.previousId !== undefined && { previous_interaction_id: frame.previousId }),
  };
}

export function completionToInteraction(
  c: ChatCompletion,
  usage: Usage,
  frame: InteractionFrame,
): Interaction {
  const choice = c.choices[0];
  return interactionObject(
    frame,
    statusOf(choice?.finish_reason),
    outputsOf(choice?.message.content, choice?.message.tool_calls),
    usage,
  );
}

/** The model's turn, in chat form, for the next interaction's history. */
export function modelTurn(outputs: readonly InteractionContent[]): ChatMessage | undefined {
  const text = outputs.flatMap((o) => (o.type === 'text' ? [o.text] : [])).join('');
  const calls = outputs.flatMap((o) =>
    o.type === 'function_call'
      ? [
          {
            id: o.id,
            type: 'function' as const,
            function: { name: o.name, arguments: JSON.stringify(o.arguments) },
          },
        ]
      : [],
  );
  if (text === '' && calls.length === 0) return undefined;
  return {
    role: 'assistant',
    content: text === '' ? null : text,
    ...(calls.length > 0 && { tool_calls: calls }),
  };
}
