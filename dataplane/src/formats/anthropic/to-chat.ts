/**
 * Anthropic Messages request (a client of `POST /v1/messages`) → canonical chat request.
 *
 * What the canonical format can say is said canonically, so any provider can serve the
 * request: images and base64 PDFs become `image_url` data URLs (SPEC's PDF convention),
 * tool_use/tool_result become tool_calls/tool messages, the thinking budget becomes a
 * reasoning_effort. What it cannot say (URL or text documents, citations, thinking
 * signatures, cache_control) rides along as Anthropic-native parts or extension keys that
 * only the Anthropic adapter reads (see CanonicalExtensions).
 */
import { GatewayError } from '../../errors.ts';
import type {
  ChatMessage,
  ChatRequest,
  ContentPart,
  ToolCall,
  ToolChoice,
  ToolDefinition,
} from '../openai/types.ts';
import type {
  AnthropicContentBlockParam,
  AnthropicDocumentBlock,
  AnthropicImageBlock,
  AnthropicMessagesRequest,
  AnthropicTextBlock,
  AnthropicThinkingConfig,
  AnthropicTool,
  AnthropicToolChoice,
  AnthropicToolResultBlock,
  ThinkingBlocks,
} from './types.ts';
import { withCacheControl } from './util.ts';

/**
 * Thinking budget → reasoning_effort: the smallest effort whose budget (1024 / 4096 / 16384,
 * the Anthropic adapter's REASONING_BUDGETS) covers the requested one, so a client never
 * gets less thinking than it asked for; anything above 16384 is `high`.
 */
export function effortForBudget(budget: number): 'low' | 'medium' | 'high' {
  if (budget <= 1024) return 'low';
  if (budget <= 4096) return 'medium';
  return 'high';
}

function effortOf(
  thinking: AnthropicThinkingConfig | undefined,
  configured: string | null | undefined,
): string | undefined {
  if (thinking === undefined || thinking.type === 'disabled') return undefined;
  if (thinking.type === 'enabled') return effortForBudget(thinking.budget_tokens);
  // Adaptive thinking: the model sizes its own budget; output_config.effort is the hint.
  return configured === 'low' || configured === 'medium' || configured === 'high' ? configured : 'medium';
}

const dataUrl = (mediaType: string, data: string): string => `data:${mediaType};base64,${data}`;

/**
 * The Anthropic block each translated media part came from, so a check made later on the
 * canonical request (media type, document capability) names the client's own field.
 */
const origins = new WeakMap<object, string>();
function remember(part: ContentPart, where: string): ContentPart {
  origins.set(part, where);
  return part;
}

/** `messages[i].content[j]…` of the canonical request → the Anthropic block's source field. */
export function anthropicParam(req: ChatRequest, param: string): string | undefined {
  const at = /^messages\[(\d+)\]\.content\[(\d+)\]/.exec(param);
  if (!at) return undefined;
  const content = req.messages[Number(at[1])]?.content;
  const part = Array.isArray(content) ? content[Number(at[2])] : undefined;
  const where = part === undefined ? undefined : origins.get(part);
  return where === undefined ? undefined : `${where}.source`;
}

function imagePart(block: AnthropicImageBlock, where: string): ContentPart {
  const source = block.source;
  if (source.type === 'file') {
    throw new GatewayError('invalid_request_error', `${where}: file sources (Files API) are not supported`, {
      param: where,
    });
  }
  const url = source.type === 'base64' ? dataUrl(source.media_type, source.data) : source.url;
  return remember({ type: 'image_url', image_url: { url }, ...withCacheControl(block) }, where);
}

/** Only a bare base64 PDF has a canonical form; richer documents pass through verbatim. */
function documentPart(block: AnthropicDocumentBlock, where: string): ContentPart {
  const { source } = block;
  if (source.type === 'file') {
    throw new GatewayError('invalid_request_error', `${where}: file sources (Files API) are not supported`, {
      param: where,
    });
  }
  const plain = !block.title && !block.context && !block.citations;
  if (source.type === 'base64' && source.media_type === 'application/pdf' && plain) {
    return remember(
      {
        type: 'image_url',
        image_url: { url: dataUrl(source.media_type, source.data) },
        ...withCacheControl(block),
      },
      where,
    );
  }
  return { ...block };
}

const textPart = (block: AnthropicTextBlock): ContentPart => ({
  type: 'text',
  text: block.text,
  ...withCacheControl(block),
});

function inputPart(
  block: AnthropicTextBlock | AnthropicImageBlock | AnthropicDocumentBlock,
  where: string,
): ContentPart {
  if (block.type === 'text') return textPart(block);
  if (block.type === 'image') return imagePart(block, where);
  return documentPart(block, where);
}

/**
 * A single plain text part becomes a string (what OpenAI clients send). Several parts stay
 * parts: how Anthropic joins adjacent text blocks is its own business, not Gantry's.
 */
function collapse(parts: ContentPart[]): string | ContentPart[] {
  const only = parts[0];
  if (
    parts.length === 1 &&
    only !== undefined &&
    only.type === 'text' &&
    !('cache_control' in only) &&
    typeof only['text'] === 'string'
  ) {
    return only['text'];
  }
  return parts;
}

function toolMessage(block: AnthropicToolResultBlock, where: string): ChatMessage {
  const content = block.content;
  const message: ChatMessage = {
    role: 'tool',
    tool_call_id: block.tool_use_id,
    content:
      typeof content === 'string' || content === undefined
        ? (content ?? '')
        : content.map((b, i) => inputPart(b, `${where}.content[${i}]`)),
    ...withCacheControl(block),
  };
  if (block.is_error === true) message['is_error'] = true;
  return message;
}

/** A user turn: tool_result blocks become tool messages, runs of other blocks user messages. */
function userMessages(blocks: AnthropicContentBlockParam[], where: string): ChatMessage[] {
  const out: ChatMessage[] = [];
  let parts: ContentPart[] = [];
  const flush = (): void => {
    if (parts.length > 0) out.push({ role: 'user', content: collapse(parts) });
    parts = [];
  };
  blocks.forEach((block, i) => {
    const at = `${where}[${i}]`;
    switch (block.type) {
      case 'tool_result':
        flush();
        out.push(toolMessage(block, at));
        return;
      case 'text':
      case 'image':
      case 'document':
        parts.push(inputPart(block, at));
        return;
      default:
        throw new GatewayError(
          'invalid_request_error',
          `${at}: ${block.type} blocks are only valid in assistant turns`,
          { param: at },
        );
    }
  });
  flush();
  return out;
}

function assistantMessage(blocks: AnthropicContentBlockParam[], where: string): ChatMessage {
  const parts: ContentPart[] = [];
  const calls: ToolCall[] = [];
  const thinking: ThinkingBlocks = [];
  blocks.forEach((block, i) => {
    switch (block.type) {
      case 'text':
        parts.push(textPart(block));
        return;
      case 'tool_use':
        calls.push({
          id: block.id,
          type: 'function',
          function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) },
        });
        return;
      case 'thinking':
        thinking.push({ type: 'thinking', thinking: block.thinking, signature: block.signature });
        return;
      case 'redacted_thinking':
        thinking.push({ type: 'redacted_thinking', data: block.data });
        return;
      default:
        throw new GatewayError(
          'invalid_request_error',
          `${where}[${i}]: ${block.type} blocks are not valid in assistant turns`,
          {
            param: `${where}[${i}]`,
          },
        );
    }
  });
  const message: ChatMessage = { role: 'assistant', content: parts.length > 0 ? collapse(parts) : null };
  if (calls.length > 0) message.tool_calls = calls;
  const reasoning = thinking.flatMap((b) => (b.type === 'thinking' ? [b.thinking] : [])).join('\n\n');
  if (reasoning !== '') message.reasoning_content = reasoning;
  if (thinking.length > 0) message['thinking_blocks'] = thinking;
  return message;
}

function toolDefinition(tool: AnthropicTool, i: number): ToolDefinition {
  if (
    tool.input_schema === undefined ||
    (tool.type !== undefined && tool.type !== null && tool.type !== 'custom')
  ) {
    throw new GatewayError(
      'invalid_request_error',
      `tools[${i}]: Anthropic server tools ('${tool.type ?? tool.name}') are not supported`,
      {
        param: `tools[${i}]`,
      },
    );
  }
  const fn: ToolDefinition['function'] = { name: tool.name, parameters: tool.input_schema };
  if (tool.description !== undefined) fn.description = tool.description;
  return { type: 'function', function: fn, ...withCacheControl(tool) };
}

function toolChoice(choice: AnthropicToolChoice): ToolChoice {
  switch (choice.type) {
    case 'auto':
      return 'auto';
    case 'any':
      return 'required';
    case 'none':
      return 'none';
    case 'tool':
      return { type: 'function', function: { name: choice.name } };
  }
}

export function messagesToChat(body: AnthropicMessagesRequest): ChatRequest {
  const messages: ChatMessage[] = [];
  if (typeof body.system === 'string') {
    if (body.system !== '') messages.push({ role: 'system', content: body.system });
  } else if (body.system !== undefined && body.system.length > 0) {
    messages.push({ role: 'system', content: collapse(body.system.map(textPart)) });
  }
  body.messages.forEach((message, i) => {
    const where = `messages[${i}].content`;
    const content = message.content;
    if (message.role === 'user') {
      if (typeof content === 'string') messages.push({ role: 'user', content });
      else messages.push(...userMessages(content, where));
    } else if (typeof content === 'string') messages.push({ role: 'assistant', content });
    else messages.push(assistantMessage(content, where));
  });

  const req: ChatRequest = { model: body.model, messages, max_tokens: body.max_tokens };
  if (body.temperature !== undefined) req.temperature = body.temperature;
  if (body.top_p !== undefined) req.top_p = body.top_p;
  // top_k is not an OpenAI field but OpenAI-compatible servers accept it; Anthropic keeps it.
  if (body.top_k !== undefined) req['top_k'] = body.top_k;
  if (body.stop_sequences !== undefined && body.stop_sequences.length > 0) req.stop = body.stop_sequences;
  if (body.tools !== undefined && body.tools.length > 0) req.tools = body.tools.map(toolDefinition);
  if (body.tool_choice !== undefined) {
    req.tool_choice = toolChoice(body.tool_choice);
    if (
      'disable_parallel_tool_use' in body.tool_choice &&
      body.tool_choice.disable_parallel_tool_use === true
    ) {
      req.parallel_tool_calls = false;
    }
  }
  const effort = effortOf(body.thinking, body.output_config?.effort);
  if (effort !== undefined) req.reasoning_effort = effort;
  const user = body.metadata?.user_id;
  if (typeof user === 'string' && user !== '') req.user = user;
  if (body.stream === true) {
    req.stream = true;
    // The message_delta event needs output_tokens: ask OpenAI-style upstreams to report usage.
    req.stream_options = { include_usage: true };
  }
  return req;
}
