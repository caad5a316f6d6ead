/** Reading and validating an Anthropic Messages request. */
import { asArray, asString, capOf, isRecord } from './behaviour.ts';
import { anthropicError } from './anthropic-errors.ts';
import type { Conversation, ErrorReply, ToolChoiceSpec, ToolSpec } from './types.ts';

type Block = Record<string, unknown>;

function blocks(content: unknown): Block[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return asArray(content).filter(isRecord);
}

function textOf(content: unknown): string {
  return blocks(content)
    .filter((b) => b.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text as string)
    .join(' ');
}

/** Text characters and media parts of blocks, looking inside tool results. */
function measure(content: unknown): { chars: number; images: number } {
  let chars = 0;
  let images = 0;
  for (const b of blocks(content)) {
    if (b.type === 'text' && typeof b.text === 'string') chars += b.text.length;
    else if (b.type === 'image' || b.type === 'document') images += 1;
    else if (b.type === 'tool_result') {
      const inner = measure(b.content ?? '');
      chars += inner.chars;
      images += inner.images;
    }
  }
  return { chars, images };
}

function readToolChoice(v: unknown): ToolChoiceSpec {
  if (!isRecord(v)) return 'auto';
  if (v.type === 'none') return 'none';
  if (v.type === 'any') return 'required';
  if (v.type === 'tool' && typeof v.name === 'string') return { name: v.name };
  return 'auto';
}

function readTools(v: unknown): ToolSpec[] {
  // Server tools (web search, ...) have no input_schema and are not the client's to call.
  return asArray(v)
    .filter(isRecord)
    .filter((t) => typeof t.name === 'string' && isRecord(t.input_schema))
    .map((t) => ({ name: t.name as string, schema: t.input_schema }));
}

export function readAnthropicConversation(body: Record<string, unknown>): Conversation {
  const messages = asArray(body.messages).filter(isRecord);
  const system = measure(body.system ?? '');
  let chars = system.chars;
  let images = system.images;
  let lastUserText = '';
  for (const m of messages) {
    const size = measure(m.content);
    chars += size.chars;
    images += size.images;
    const text = textOf(m.content);
    if (m.role === 'user' && text.trim() !== '') lastUserText = text;
  }
  const last = messages.at(-1);
  return {
    lastUserText,
    promptChars: chars,
    images,
    prefill: last?.role === 'assistant' ? textOf(last.content) : undefined,
    lastIsToolResult: last?.role === 'user' && blocks(last.content).some((b) => b.type === 'tool_result'),
    tools: readTools(body.tools),
    toolChoice: readToolChoice(body.tool_choice),
    jsonSchema: readOutputFormat(body),
    maxTokens: capOf(body.max_tokens),
  };
}

const bad = (message: string): ErrorReply => anthropicError(400, 'invalid_request_error', message);

function idsOf(content: unknown, type: string, key: string): string[] {
  return blocks(content)
    .filter((b) => b.type === type)
    .map((b) => asString(b[key]) ?? '');
}

/** Checks the real API makes, chosen because gateway translations tend to break them. */
export function validateAnthropic(
  body: Record<string, unknown>,
  needMaxTokens: boolean,
): ErrorReply | undefined {
  if (typeof body.model !== 'string') return bad('model: Field required');
  if (needMaxTokens && !Number.isInteger(body.max_tokens)) return bad('max_tokens: Field required');
  if (!Array.isArray(body.messages)) return bad('messages: Field required');
  const messages: unknown[] = body.messages;
  if (messages.length === 0) return bad('messages: at least one message is required');
  for (const [i, m] of messages.entries()) {
    if (!isRecord(m) || (m.role !== 'user' && m.role !== 'assistant')) {
      return bad(`messages.${i}.role: Input should be 'user' or 'assistant'`);
    }
    const next = messages[i + 1];
    const uses = m.role === 'assistant' ? idsOf(m.content, 'tool_use', 'id') : [];
    if (uses.length > 0 && next !== undefined) {
      const answered =
        isRecord(next) && next.role === 'user' ? idsOf(next.content, 'tool_result', 'tool_use_id') : [];
      const missing = uses.filter((id) => !answered.includes(id));
      if (missing.length > 0) {
        return bad(
          `messages.${i + 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ` +
            `${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`,
        );
      }
    }
    if (m.role === 'user') {
      const prev = messages[i - 1];
      const offered =
        isRecord(prev) && prev.role === 'assistant' ? idsOf(prev.content, 'tool_use', 'id') : [];
      const stray = idsOf(m.content, 'tool_result', 'tool_use_id').filter((id) => !offered.includes(id));
      if (stray.length > 0) {
        return bad(
          `messages.${i}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${stray.join(', ')}. ` +
            'Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
        );
      }
    }
  }
  const last = messages.at(-1);
  if (isRecord(last) && last.role === 'assistant') {
    const parts = blocks(last.content);
    const tail = parts.at(-1);
    if (tail?.type === 'text' && typeof tail.text === 'string' && /\s$/.test(tail.text)) {
      return bad('messages: final assistant content cannot end with trailing whitespace');
    }
  }
  return undefined;
}

/** Structured output: `output_format`, or the newer `output_config.format`. */
function readOutputFormat(body: Record<string, unknown>): unknown {
  const nested = isRecord(body.output_config) ? body.output_config.format : undefined;
  const format = body.output_format ?? nested;
  if (!isRecord(format) || format.type !== 'json_schema') return undefined;
  return format.schema ?? {};
}
