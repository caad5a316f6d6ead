/** Canonical chat completion → Responses object (and the pieces streams share). */
import type { ChatCompletion, ChatMessage, FinishReason, Usage } from '../openai/types.ts';
import type {
  OutputItem,
  ResponseObject,
  ResponsesRequest,
  ResponsesUsage,
  ResponseStatus,
  TextFormat,
} from './types.ts';

/** What the response object echoes of the request, fixed before the answer exists. */
export interface ResponseFrame {
  id: string;
  createdAt: number;
  model: string;
  request: ResponsesRequest;
}

export function responsesUsage(usage: Usage | undefined | null): ResponsesUsage | null {
  if (!usage) return null;
  return {
    input_tokens: usage.prompt_tokens,
    input_tokens_details: { cached_tokens: usage.prompt_tokens_details?.cached_tokens ?? 0 },
    output_tokens: usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: usage.completion_tokens_details?.reasoning_tokens ?? 0 },
    total_tokens: usage.total_tokens,
  };
}

export function statusOf(finish: FinishReason | null | undefined): {
  status: ResponseStatus;
  incomplete: ResponseObject['incomplete_details'];
} {
  if (finish === 'length') return { status: 'incomplete', incomplete: { reason: 'max_output_tokens' } };
  if (finish === 'content_filter') return { status: 'incomplete', incomplete: { reason: 'content_filter' } };
  return { status: 'completed', incomplete: null };
}

/** The response object around some output; `in_progress` ones start streams. */
export function responseObject(
  frame: ResponseFrame,
  parts: {
    status: ResponseStatus;
    output: OutputItem[];
    usage: ResponsesUsage | null;
    incomplete?: ResponseObject['incomplete_details'];
    error?: ResponseObject['error'];
  },
): ResponseObject {
  const r = frame.request;
  return {
    id: frame.id,
    object: 'response',
    created_at: frame.createdAt,
    status: parts.status,
    error: parts.error ?? null,
    incomplete_details: parts.incomplete ?? null,
    instructions: r.instructions ?? null,
    max_output_tokens: r.max_output_tokens ?? null,
    model: frame.model,
    output: parts.output,
    parallel_tool_calls: r.parallel_tool_calls ?? true,
    previous_response_id: r.previous_response_id ?? null,
    reasoning: { effort: r.reasoning?.effort ?? null, summary: r.reasoning?.summary ?? null },
    store: r.store !== false,
    temperature: r.temperature ?? null,
    text: { format: r.text?.format ?? ({ type: 'text' } satisfies TextFormat) },
    tool_choice: r.tool_choice ?? 'auto',
    tools: r.tools ?? [],
    top_p: r.top_p ?? null,
    truncation: r.truncation === 'auto' ? 'auto' : 'disabled',
    usage: parts.usage,
    user: r.user ?? null,
    metadata: withoutGatewayKeys(r.metadata),
  };
}

/** `cache_bypass` is Gantry's instruction, not the caller's metadata to keep. */
function withoutGatewayKeys(metadata: ResponsesRequest['metadata']): Record<string, string> {
  if (!metadata) return {};
  const { cache_bypass: _omit, ...rest } = metadata;
  return rest;
}

/** Item ids derived from the response id, so they are unique and stable per response. */
export const itemId = (responseId: string, kind: 'msg' | 'fc' | 'rs', index: number): string =>
  `${kind}_${responseId.replace(/^resp_/, '')}${index}`;

export function completionToResponse(completion: ChatCompletion, frame: ResponseFrame): ResponseObject {
  const choice = completion.choices[0];
  const message = choice?.message;
  const output: OutputItem[] = [];
  if (message?.reasoning_content)
    output.push({
      type: 'reasoning',
      id: itemId(frame.id, 'rs', output.length),
      summary: [{ type: 'summary_text', text: message.reasoning_content }],
    });
  const { status, incomplete } = statusOf(choice?.finish_reason);
  const itemStatus = status === 'completed' ? 'completed' : 'incomplete';
  if (message?.refusal)
    output.push({
      type: 'message',
      id: itemId(frame.id, 'msg', output.length),
      status: itemStatus,
      role: 'assistant',
      content: [{ type: 'refusal', refusal: message.refusal }],
    });
  else if (typeof message?.content === 'string' && (message.content !== '' || !message.tool_calls?.length))
    output.push({
      type: 'message',
      id: itemId(frame.id, 'msg', output.length),
      status: itemStatus,
      role: 'assistant',
      content: [{ type: 'output_text', text: message.content, annotations: [] }],
    });
  for (const call of message?.tool_calls ?? [])
    output.push({
      type: 'function_call',
      id: itemId(frame.id, 'fc', output.length),
      call_id: call.id,
      name: call.function.name,
      arguments: call.function.arguments,
      status: 'completed',
    });
  return responseObject(frame, { status, incomplete, output, usage: responsesUsage(completion.usage) });
}

/** A response's output as the chat assistant turn a follow-up request replays. */
export function assistantTurnOf(output: readonly OutputItem[]): ChatMessage | undefined {
  let text = '';
  const calls: NonNullable<ChatMessage['tool_calls']> = [];
  for (const item of output) {
    if (item.type === 'message')
      for (const part of item.content) text += part.type === 'output_text' ? part.text : part.refusal;
    else if (item.type === 'function_call')
      calls.push({
        id: item.call_id,
        type: 'function',
        function: { name: item.name, arguments: item.arguments },
      });
  }
  if (text === '' && calls.length === 0) return undefined;
  const turn: ChatMessage = { role: 'assistant', content: text === '' ? null : text };
  if (calls.length > 0) turn.tool_calls = calls;
  return turn;
}
