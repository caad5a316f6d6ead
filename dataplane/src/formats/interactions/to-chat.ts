/**
 * An Interactions request → the canonical chat request. Every field is either translated or
 * refused with a 400 naming it (never dropped): tools other than functions, background
 * runs and agent interactions have no chat equivalent here. Pure.
 */
import { invalidParam } from '../../errors.ts';
import type { ChatMessage, ChatRequest, ContentPart, ToolDefinition } from '../openai/types.ts';
import type { InteractionContent, InteractionsRequest, InteractionTurn } from './types.ts';

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const resultText = (result: unknown): string =>
  typeof result === 'string' ? result : JSON.stringify(result ?? null);

function imagePart(c: Extract<InteractionContent, { type: 'image' }>, at: string): ContentPart {
  if (typeof c.data === 'string' && c.data !== '')
    return { type: 'image_url', image_url: { url: `data:${c.mime_type ?? 'image/png'};base64,${c.data}` } };
  if (typeof c.uri === 'string' && /^https?:\/\//.test(c.uri))
    return { type: 'image_url', image_url: { url: c.uri } };
  throw invalidParam(at, 'an image needs base64 data or an http(s) uri');
}

/** One turn → one or more chat messages (function results become tool messages). */
function turnMessages(turn: InteractionTurn, at: string): ChatMessage[] {
  if (turn.role !== 'user' && turn.role !== 'model')
    throw invalidParam(`${at}.role`, 'must be user or model');
  if (typeof turn.content === 'string')
    return [{ role: turn.role === 'model' ? 'assistant' : 'user', content: turn.content }];
  if (!Array.isArray(turn.content))
    throw invalidParam(`${at}.content`, 'must be a string or an array of contents');
  const parts: ContentPart[] = [];
  const tools: ChatMessage[] = [];
  const calls: NonNullable<ChatMessage['tool_calls']> = [];
  for (const [i, c] of turn.content.entries()) {
    const where = `${at}.content[${i}]`;
    if (!isRecord(c)) throw invalidParam(where, 'must be an object');
    switch (c.type) {
      case 'text':
        if (typeof c.text !== 'string') throw invalidParam(`${where}.text`, 'must be a string');
        parts.push({ type: 'text', text: c.text });
        break;
      case 'image':
        if (turn.role === 'model') throw invalidParam(where, 'images are accepted in user turns only');
        parts.push(imagePart(c, where));
        break;
      case 'function_call':
        if (turn.role !== 'model') throw invalidParam(where, 'function_call belongs in a model turn');
        if (typeof c.id !== 'string' || typeof c.name !== 'string')
          throw invalidParam(where, 'function_call needs an id and a name');
        calls.push({
          id: c.id,
          type: 'function',
          function: { name: c.name, arguments: JSON.stringify(c.arguments ?? {}) },
        });
        break;
      case 'function_result':
        if (typeof c.call_id !== 'string') throw invalidParam(`${where}.call_id`, 'is required');
        tools.push({ role: 'tool', tool_call_id: c.call_id, content: resultText(c.result) });
        break;
      default:
        throw invalidParam(
          `${where}.type`,
          `content type ${String((c as { type: unknown }).type).slice(0, 64)} is not supported; use text, image, function_call or function_result`,
        );
    }
  }
  if (turn.role === 'model') {
    const text = parts.map((p) => (p.type === 'text' ? (p as { text: string }).text : '')).join('');
    return [
      {
        role: 'assistant',
        content: text === '' ? null : text,
        ...(calls.length > 0 && { tool_calls: calls }),
      },
    ];
  }
  return [...tools, ...(parts.length > 0 ? [{ role: 'user' as const, content: parts }] : [])];
}

/** The input as chat messages: a string, a list of contents (one user turn), or a list of turns. */
export function inputMessages(input: InteractionsRequest['input']): ChatMessage[] {
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  if (!Array.isArray(input) || input.length === 0)
    throw invalidParam(
      'input',
      'must be a string, a non-empty array of contents or a non-empty array of turns',
    );
  const turns = input.every((x) => isRecord(x) && 'role' in x);
  if (turns) return (input as unknown as InteractionTurn[]).flatMap((t, i) => turnMessages(t, `input[${i}]`));
  if (input.some((x) => isRecord(x) && 'role' in x)) throw invalidParam('input', 'mixes turns and contents');
  return turnMessages({ role: 'user', content: input as InteractionContent[] }, 'input');
}

function tools(list: InteractionsRequest['tools']): ToolDefinition[] | undefined {
  if (list === undefined) return undefined;
  return list.map((t, i) => {
    if (t.type !== 'function')
      throw invalidParam(
        `tools[${i}].type`,
        `tool type ${String(t.type).slice(0, 64)} is not supported; only function tools are`,
      );
    if (typeof t.name !== 'string' || t.name === '') throw invalidParam(`tools[${i}].name`, 'is required');
    return {
      type: 'function',
      function: {
        name: t.name,
        ...(t.description !== undefined && { description: t.description }),
        ...(t.parameters !== undefined && { parameters: t.parameters }),
      },
    };
  });
}

const FIELDS = new Set([
  'model',
  'input',
  'system_instruction',
  'previous_interaction_id',
  'tools',
  'generation_config',
  'response_format',
  'response_mime_type',
  'stream',
  'store',
  'background',
  'agent',
]);
const GENERATION_FIELDS = new Set([
  'temperature',
  'top_p',
  'max_output_tokens',
  'stop_sequences',
  'seed',
  'thinking_level',
]);

/** A field Gantry cannot honour is refused with its name, never silently dropped. */
export function checkFields(req: object): void {
  for (const k of Object.keys(req))
    if (!FIELDS.has(k))
      throw invalidParam(k.slice(0, 64), "is not supported by this gateway's Interactions API");
  const g = (req as { generation_config?: unknown }).generation_config;
  if (isRecord(g))
    for (const k of Object.keys(g))
      if (!GENERATION_FIELDS.has(k))
        throw invalidParam(
          `generation_config.${k.slice(0, 64)}`,
          "is not supported by this gateway's Interactions API",
        );
}

export interface Translated {
  chat: ChatRequest;
  /** History plus this input, without the system instruction (it is per interaction). */
  conversation: ChatMessage[];
}

export function interactionsToChat(req: InteractionsRequest, history: ChatMessage[]): Translated {
  checkFields(req);
  if (req.background === true)
    throw invalidParam(
      'background',
      'background interactions are not supported; send the request without it',
    );
  if (req.agent !== undefined)
    throw invalidParam(
      'agent',
      'agent interactions are not served here; call the agent through /v1/a2a/{agent}/message/send',
    );
  if (
    req.response_mime_type !== undefined &&
    req.response_mime_type !== 'application/json' &&
    req.response_mime_type !== 'text/plain'
  )
    throw invalidParam('response_mime_type', 'must be application/json or text/plain');
  const conversation = [...history, ...inputMessages(req.input)];
  const g = req.generation_config ?? {};
  const chat: ChatRequest = {
    model: req.model,
    messages: req.system_instruction
      ? [{ role: 'system', content: req.system_instruction }, ...conversation]
      : conversation,
    ...(g.temperature !== undefined && { temperature: g.temperature }),
    ...(g.top_p !== undefined && { top_p: g.top_p }),
    ...(g.max_output_tokens !== undefined && { max_completion_tokens: g.max_output_tokens }),
    ...(g.stop_sequences !== undefined && { stop: g.stop_sequences }),
    ...(g.seed !== undefined && { seed: g.seed }),
    ...(g.thinking_level !== undefined && { reasoning_effort: g.thinking_level }),
    ...(req.stream === true && { stream: true, stream_options: { include_usage: true } }),
  };
  const defined = tools(req.tools);
  if (defined) chat.tools = defined;
  if (req.response_format !== undefined)
    chat.response_format = {
      type: 'json_schema',
      json_schema: { name: 'response', schema: req.response_format },
    };
  else if (req.response_mime_type === 'application/json') chat.response_format = { type: 'json_object' };
  return { chat, conversation };
}
