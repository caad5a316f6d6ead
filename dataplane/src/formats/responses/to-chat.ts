/**
 * Responses request → canonical chat request. Input items become chat messages; a stored
 * conversation (previous_response_id) is prepended; instructions become the leading system
 * message of this turn only (OpenAI does not carry them to the next response).
 * A field that needs a feature Gantry does not have is a 400 naming it (REFUSED_FIELDS). Hints
 * that do not change what is asked (`truncation`, `include`, `max_tool_calls`, `top_logprobs`,
 * `service_tier`, `prompt_cache_key`) are accepted and not forwarded, so SDKs that send them by
 * default keep working.
 */
import { invalidParam } from '../../errors.ts';
import type { ChatMessage, ChatRequest, ContentPart, ToolChoice, ToolDefinition } from '../openai/types.ts';
import { compactionSummary } from './compaction.ts';
import type {
  FunctionCallItem,
  InputItem,
  InputPart,
  ResponsesRequest,
  ResponsesToolChoice,
  TextFormat,
} from './types.ts';

export interface TranslatedRequest {
  chat: ChatRequest;
  /** The conversation without this turn's instructions: what a follow-up response continues. */
  conversation: ChatMessage[];
}

/** Request fields of the Responses API that need a feature Gantry does not have. */
const REFUSED_FIELDS: Record<string, string> = {
  conversation: 'the Conversations API is not served; chain turns with previous_response_id',
  prompt: 'stored prompt templates are not served; send instructions and input',
  background: 'background responses are not served; use stream instead',
};

/** `sealKey`: the caller's (compaction.ts `compactionSealKey`), which the compaction items it sends back must be sealed with. */
export function responsesToChat(
  req: ResponsesRequest,
  history: readonly ChatMessage[],
  sealKey: string,
): TranslatedRequest {
  for (const [field, why] of Object.entries(REFUSED_FIELDS))
    if (req[field] !== undefined && req[field] !== null && req[field] !== false)
      throw invalidParam(field, why);
  const input = inputMessages(req.input, sealKey);
  const conversation = [...history, ...input];
  if (conversation.length === 0) throw invalidParam('input', 'is required without previous_response_id');
  const messages: ChatMessage[] =
    typeof req.instructions === 'string' && req.instructions !== ''
      ? [{ role: 'system', content: req.instructions }, ...conversation]
      : [...conversation];

  const chat: ChatRequest = { model: req.model, messages };
  if (req.stream === true) {
    chat.stream = true;
    chat.stream_options = { include_usage: true };
  }
  if (typeof req.max_output_tokens === 'number') chat.max_completion_tokens = req.max_output_tokens;
  if (typeof req.temperature === 'number') chat.temperature = req.temperature;
  if (typeof req.top_p === 'number') chat.top_p = req.top_p;
  if (typeof req.user === 'string') chat.user = req.user;
  // The end user, as OpenAI now names it: upstreams use it for abuse detection, context
  // recovery to keep end users apart.
  if (typeof req.safety_identifier === 'string') chat.safety_identifier = req.safety_identifier;
  if (typeof req.parallel_tool_calls === 'boolean') chat.parallel_tool_calls = req.parallel_tool_calls;
  if (req.tools !== undefined && req.tools.length > 0) chat.tools = req.tools.map(toolOf);
  if (req.tool_choice !== undefined) chat.tool_choice = toolChoiceOf(req.tool_choice);
  const format = responseFormatOf(req.text?.format);
  if (format) chat.response_format = format;
  if (typeof req.reasoning?.effort === 'string') chat.reasoning_effort = req.reasoning.effort;
  if (req.metadata?.cache_bypass !== undefined) chat.metadata = { cache_bypass: req.metadata.cache_bypass };
  return { chat, conversation };
}

export function inputMessages(input: ResponsesRequest['input'], sealKey: string): ChatMessage[] {
  if (input === undefined) return [];
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  const out: ChatMessage[] = [];
  input.forEach((item, i) => appendItem(out, item, `input[${i}]`, sealKey));
  return out;
}

function appendItem(out: ChatMessage[], item: InputItem, at: string, sealKey: string): void {
  checkItem(item, at);
  switch (item.type) {
    case undefined:
    case 'message': {
      const role = item.role;
      const content =
        typeof item.content === 'string'
          ? item.content
          : item.content.map((p, j) => partOf(p, `${at}.content[${j}]`, role));
      out.push({ role, content: role === 'assistant' ? assistantText(content) : content });
      return;
    }
    case 'function_call':
      appendCall(out, item);
      return;
    case 'function_call_output':
      out.push({
        role: 'tool',
        tool_call_id: item.call_id,
        content:
          typeof item.output === 'string'
            ? item.output
            : item.output.map((p, j) => partOf(p, `${at}.output[${j}]`, 'user')),
      });
      return;
    case 'reasoning':
      // Reasoning is the model's own state; chat upstreams take none back, so it is not re-sent.
      return;
    case 'compaction':
      out.push({
        role: 'system',
        content: compactionSummary(item.encrypted_content, `${at}.encrypted_content`, sealKey),
      });
      return;
    default: {
      const type = (item as { type: unknown }).type;
      throw invalidParam(`${at}.type`, `input item type ${JSON.stringify(type)} is not supported`);
    }
  }
}

/** Consecutive function calls are one assistant turn with several tool calls, as chat expects. */
function appendCall(out: ChatMessage[], item: FunctionCallItem): void {
  const call = {
    id: item.call_id,
    type: 'function' as const,
    function: { name: item.name, arguments: item.arguments },
  };
  const last = out.at(-1);
  if (last?.role === 'assistant' && last.tool_calls !== undefined) {
    last.tool_calls.push(call);
    return;
  }
  if (last?.role === 'assistant' && last.tool_calls === undefined) {
    last.tool_calls = [call];
    return;
  }
  out.push({ role: 'assistant', content: null, tool_calls: [call] });
}

/** Assistant turns are text for every upstream: joined output text. */
function assistantText(content: string | ContentPart[]): string {
  if (typeof content === 'string') return content;
  return content.map((p) => (p.type === 'text' ? String(p.text) : '')).join('');
}

function partOf(part: InputPart, at: string, role: string): ContentPart {
  switch (part.type) {
    case 'input_text':
    case 'output_text':
      return { type: 'text', text: part.text };
    case 'refusal':
      return { type: 'text', text: part.refusal };
    case 'input_image':
      if (role === 'assistant') throw invalidParam(`${at}.type`, 'assistant messages cannot carry images');
      if (typeof part.image_url !== 'string' || part.image_url === '')
        throw invalidParam(`${at}.image_url`, 'is required: file_id references are not supported');
      return {
        type: 'image_url',
        image_url: part.detail ? { url: part.image_url, detail: part.detail } : { url: part.image_url },
      };
    case 'input_file':
      if (typeof part.file_data !== 'string' || part.file_data === '')
        throw invalidParam(
          `${at}.file_data`,
          'is required: file_id and file_url references are not supported',
        );
      return {
        type: 'file',
        file: part.filename
          ? { file_data: part.file_data, filename: part.filename }
          : { file_data: part.file_data },
      };
    case 'input_audio':
      return { type: 'input_audio', input_audio: part.input_audio };
    default: {
      const type = (part as { type: unknown }).type;
      throw invalidParam(`${at}.type`, `content part type ${JSON.stringify(type)} is not supported`);
    }
  }
}

function toolOf(
  tool: {
    type: string;
    name?: string;
    description?: string | null;
    parameters?: unknown;
    strict?: boolean | null;
  },
  i: number,
): ToolDefinition {
  if (tool.type !== 'function')
    throw invalidParam(
      `tools[${i}].type`,
      `tool type ${JSON.stringify(tool.type)} is not supported; only function tools are`,
    );
  const fn: ToolDefinition['function'] = { name: tool.name ?? '' };
  if (typeof tool.description === 'string') fn.description = tool.description;
  if (tool.parameters !== null && typeof tool.parameters === 'object')
    fn.parameters = tool.parameters as Record<string, unknown>;
  if (typeof tool.strict === 'boolean') fn.strict = tool.strict;
  return { type: 'function', function: fn };
}

function toolChoiceOf(choice: ResponsesToolChoice): ToolChoice {
  if (typeof choice === 'string') return choice;
  if (choice.type === 'function' && typeof choice.name === 'string')
    return { type: 'function', function: { name: choice.name } };
  throw invalidParam('tool_choice', `tool choice type ${JSON.stringify(choice.type)} is not supported`);
}

function responseFormatOf(format: TextFormat | undefined): ChatRequest['response_format'] {
  if (format === undefined || format.type === 'text') return undefined;
  if (format.type === 'json_object') return { type: 'json_object' };
  const schema: Record<string, unknown> = { name: format.name, schema: format.schema };
  if (format.description !== undefined) schema.description = format.description;
  if (typeof format.strict === 'boolean') schema.strict = format.strict;
  return { type: 'json_schema', json_schema: schema };
}

const need = (ok: boolean, param: string, message: string): void => {
  if (!ok) throw invalidParam(param, message);
};

/** The fields each item type needs, checked before the item is read (the schema is loose). */
function checkItem(item: InputItem, at: string): void {
  const raw = item as unknown as Record<string, unknown>;
  switch (item.type) {
    case undefined:
    case 'message':
      need(typeof raw.role === 'string', `${at}.role`, 'is required');
      need(typeof raw.content === 'string' || Array.isArray(raw.content), `${at}.content`, 'is required');
      return;
    case 'function_call':
      need(typeof raw.call_id === 'string', `${at}.call_id`, 'is required');
      need(typeof raw.name === 'string' && raw.name !== '', `${at}.name`, 'is required');
      need(typeof raw.arguments === 'string', `${at}.arguments`, 'is required');
      return;
    case 'function_call_output':
      need(typeof raw.call_id === 'string', `${at}.call_id`, 'is required');
      need(typeof raw.output === 'string' || Array.isArray(raw.output), `${at}.output`, 'is required');
      return;
    case 'compaction':
      need(typeof raw.encrypted_content === 'string', `${at}.encrypted_content`, 'is required');
      return;
  }
}
