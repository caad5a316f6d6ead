/** OpenAI Chat Completions (also spoken by Azure OpenAI): request reading, validation, answers. */
import {
  asArray,
  asString,
  capOf,
  isRecord,
  nowSeconds,
  plan,
  randomId,
  splitFixed,
  splitWords,
} from './behaviour.ts';
import { AZURE_FILTER_RESULTS, openaiError } from './openai-errors.ts';
import type { Conversation, ErrorReply, Frame, Outcome, Reply, ToolChoiceSpec, ToolSpec } from './types.ts';

interface Text {
  text: string;
  chars: number;
  images: number;
}

/** Text of a `content` (string or parts); images, documents and files are counted. */
function readContent(content: unknown): Text {
  if (typeof content === 'string') return { text: content, chars: content.length, images: 0 };
  const texts: string[] = [];
  let images = 0;
  for (const part of asArray(content)) {
    if (!isRecord(part)) continue;
    if (part.type === 'text' && typeof part.text === 'string') texts.push(part.text);
    else if (part.type === 'image_url' || part.type === 'file') images += 1;
  }
  return { text: texts.join(' '), chars: texts.reduce((n, t) => n + t.length, 0), images };
}

function readTools(body: Record<string, unknown>): ToolSpec[] {
  const tools: ToolSpec[] = [];
  for (const t of asArray(body.tools)) {
    if (isRecord(t) && isRecord(t.function) && typeof t.function.name === 'string') {
      tools.push({ name: t.function.name, schema: t.function.parameters });
    }
  }
  return tools;
}

function readToolChoice(v: unknown): ToolChoiceSpec {
  if (v === 'none' || v === 'required') return v;
  if (isRecord(v) && isRecord(v.function) && typeof v.function.name === 'string') {
    return { name: v.function.name };
  }
  return 'auto';
}

export function readChatConversation(body: Record<string, unknown>): Conversation {
  const messages = asArray(body.messages).filter(isRecord);
  let chars = 0;
  let images = 0;
  let lastUserText = '';
  for (const m of messages) {
    const c = readContent(m.content);
    chars += c.chars;
    images += c.images;
    if (m.role === 'user' && c.text.trim() !== '') lastUserText = c.text;
  }
  const last = messages.at(-1);
  const prefill =
    body.continue_final_message === true && last?.role === 'assistant'
      ? readContent(last.content).text
      : undefined;
  return {
    lastUserText,
    promptChars: chars,
    images,
    prefill,
    lastIsToolResult: last?.role === 'tool' || last?.role === 'function',
    tools: readTools(body),
    toolChoice: readToolChoice(body.tool_choice),
    jsonSchema: readJsonSchema(body.response_format),
    // The newer name wins: reasoning models take only it, older ones only `max_tokens`.
    maxTokens: capOf(body.max_completion_tokens) ?? capOf(body.max_tokens),
  };
}

/** OpenAI's finish reason: `length` when the cap cut the answer, tool call or not. */
function finishOf(reply: Reply): string {
  if (reply.cut) return 'length';
  return reply.kind === 'text' ? 'stop' : 'tool_calls';
}

function readJsonSchema(format: unknown): unknown {
  if (!isRecord(format) || format.type !== 'json_schema' || !isRecord(format.json_schema)) return undefined;
  return format.json_schema.schema ?? {};
}

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool', 'function']);

function toolCallIds(m: Record<string, unknown>): string[] {
  return asArray(m.tool_calls)
    .filter(isRecord)
    .map((c) => asString(c.id) ?? '');
}

/** The request errors OpenAI itself returns; they catch translation bugs in the gateway. */
export function validateChat(body: Record<string, unknown>, needModel: boolean): ErrorReply | undefined {
  if (needModel && typeof body.model !== 'string') {
    return openaiError(400, 'you must provide a model parameter', 'invalid_request_error');
  }
  if (!Array.isArray(body.messages)) {
    return openaiError(
      400,
      "Missing required parameter: 'messages'.",
      'invalid_request_error',
      'missing_required_parameter',
      'messages',
    );
  }
  if (body.messages.length === 0) {
    return openaiError(
      400,
      "Invalid 'messages': empty array.",
      'invalid_request_error',
      'empty_array',
      'messages',
    );
  }
  if (Array.isArray(body.tools) && body.tools.length === 0) {
    return openaiError(400, "Invalid 'tools': empty array.", 'invalid_request_error', 'empty_array', 'tools');
  }
  const messages: unknown[] = body.messages;
  for (const [i, m] of messages.entries()) {
    if (!isRecord(m) || typeof m.role !== 'string' || !ROLES.has(m.role)) {
      return openaiError(
        400,
        `Invalid value for 'messages[${i}].role'.`,
        'invalid_request_error',
        null,
        `messages.[${i}].role`,
      );
    }
    if (m.role === 'tool') {
      let j = i - 1;
      while (j >= 0 && isRecord(messages[j]) && (messages[j] as Record<string, unknown>).role === 'tool') j--;
      const owner = messages[j];
      if (
        !isRecord(owner) ||
        owner.role !== 'assistant' ||
        !toolCallIds(owner).includes(asString(m.tool_call_id) ?? '')
      ) {
        return openaiError(
          400,
          "Invalid parameter: messages with role 'tool' must be a response to a preceding message with 'tool_calls'.",
          'invalid_request_error',
          null,
          `messages.[${i}].role`,
        );
      }
    }
    if (m.role === 'assistant' && toolCallIds(m).length > 0) {
      const answered = new Set<string>();
      for (let j = i + 1; j < messages.length; j++) {
        const n = messages[j];
        if (!isRecord(n) || n.role !== 'tool') break;
        answered.add(asString(n.tool_call_id) ?? '');
      }
      const missing = toolCallIds(m).filter((id) => !answered.has(id));
      if (missing.length > 0) {
        return openaiError(
          400,
          "An assistant message with 'tool_calls' must be followed by tool messages responding to each " +
            `'tool_call_id'. The following tool_call_ids did not have response messages: ${missing.join(', ')}`,
          'invalid_request_error',
          null,
          `messages.[${i}].role`,
        );
      }
    }
  }
  return undefined;
}

export interface ChatFlavour {
  azure: boolean;
  model: string;
}

function usageOf(reply: Reply): Record<string, unknown> {
  return {
    prompt_tokens: reply.promptTokens,
    completion_tokens: reply.completionTokens,
    total_tokens: reply.promptTokens + reply.completionTokens,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

function chatJson(reply: Reply, f: ChatFlavour, usage: boolean): Record<string, unknown> {
  const message =
    reply.kind === 'text'
      ? { role: 'assistant', content: reply.text, refusal: null, annotations: [] }
      : {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: randomId('call_'),
              type: 'function',
              function: { name: reply.name, arguments: reply.argsJson },
            },
          ],
          refusal: null,
          annotations: [],
        };
  const choice: Record<string, unknown> = {
    index: 0,
    message,
    logprobs: null,
    finish_reason: finishOf(reply),
  };
  if (f.azure) choice.content_filter_results = AZURE_FILTER_RESULTS;
  const out: Record<string, unknown> = {
    id: randomId('chatcmpl-'),
    object: 'chat.completion',
    created: nowSeconds(),
    model: f.model,
    choices: [choice],
  };
  if (usage) out.usage = usageOf(reply);
  if (f.azure)
    out.prompt_filter_results = [{ prompt_index: 0, content_filter_results: AZURE_FILTER_RESULTS }];
  out.system_fingerprint = 'fp_fake';
  return out;
}

/** Characters the padding is cut from: drawn once, so a chunk's padding costs a slice. */
const PADDING = randomId('', 64);

/**
 * Padding of 1 to 16 characters at a random place in PADDING. Its content carries no meaning; a
 * cryptographic draw per chunk made the fake, which shares a core with the bench's load
 * generator, the bottleneck of streamed runs (its CPU per stream 0.19 -> 0.32 ms).
 */
function obfuscation(): string {
  const length = 1 + Math.floor(Math.random() * 16);
  const at = Math.floor(Math.random() * (PADDING.length - length));
  return PADDING.slice(at, at + length);
}

/**
 * OpenAI's current chunk shape: `"usage":null` on every chunk when usage was asked for, then an
 * `obfuscation` string of random length (padding against size side channels) unless the request
 * set `stream_options.include_obfuscation: false`. The relay must cope with usage not being last.
 */
function chatFrames(reply: Reply, f: ChatFlavour, includeUsage: boolean, obfuscate: boolean): Frame[] {
  const id = randomId('chatcmpl-');
  const created = nowSeconds();
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}): string => {
    const body: Record<string, unknown> = { id, object: 'chat.completion.chunk', created, model: f.model };
    body.system_fingerprint = 'fp_fake';
    body.choices = choices;
    if (includeUsage) body.usage = null;
    const out = { ...body, ...extra };
    if (obfuscate) out.obfuscation = obfuscation();
    return `data: ${JSON.stringify(out)}\n\n`;
  };
  const choice = (delta: Record<string, unknown>, finish: string | null = null): Record<string, unknown> => {
    const c: Record<string, unknown> = { index: 0, delta, logprobs: null, finish_reason: finish };
    if (f.azure) c.content_filter_results = finish ? {} : AZURE_FILTER_RESULTS;
    return c;
  };
  const frames: Frame[] = [];
  if (f.azure) {
    // Azure's first event carries only the prompt filter verdicts: no choices, empty ids.
    const filters = { choices: [], created: 0, id: '', model: '', object: '' };
    const promptFilter = [{ prompt_index: 0, content_filter_results: AZURE_FILTER_RESULTS }];
    frames.push({
      role: 'pre',
      data: `data: ${JSON.stringify({ ...filters, prompt_filter_results: promptFilter })}\n\n`,
    });
  }
  if (reply.kind === 'text') {
    frames.push({ role: 'pre', data: chunk([choice({ role: 'assistant', content: '', refusal: null })]) });
    for (const w of splitWords(reply.text))
      frames.push({ role: 'content', data: chunk([choice({ content: w })]) });
    frames.push({ role: 'post', data: chunk([choice({}, finishOf(reply))]) });
  } else {
    const call = {
      index: 0,
      id: randomId('call_'),
      type: 'function',
      function: { name: reply.name, arguments: '' },
    };
    frames.push({
      role: 'pre',
      data: chunk([choice({ role: 'assistant', content: null, tool_calls: [call], refusal: null })]),
    });
    for (const piece of splitFixed(reply.argsJson)) {
      const delta = { tool_calls: [{ index: 0, function: { arguments: piece } }] };
      frames.push({ role: 'content', data: chunk([choice(delta)]) });
    }
    frames.push({ role: 'post', data: chunk([choice({}, finishOf(reply))]) });
  }
  if (includeUsage) frames.push({ role: 'post', data: chunk([], { usage: usageOf(reply) }) });
  frames.push({ role: 'end', data: 'data: [DONE]\n\n' });
  return frames;
}

export const OPENAI_GARBAGE = 'data: {"id":"chatcmpl-garbage","choices":[{"delta":{"content":"unterminat\n\n';

export function answerChat(body: Record<string, unknown>, f: ChatFlavour, usage: boolean): Outcome {
  const reply = plan(readChatConversation(body));
  if (body.stream !== true) return { kind: 'json', body: chatJson(reply, f, usage) };
  const options = isRecord(body.stream_options) ? body.stream_options : {};
  const includeUsage = usage && options.include_usage === true;
  // The Azure flavour keeps the shape it was recorded with (no obfuscation member).
  const obfuscate = !f.azure && options.include_obfuscation !== false;
  return {
    kind: 'stream',
    contentType: 'text/event-stream; charset=utf-8',
    frames: chatFrames(reply, f, includeUsage, obfuscate),
    garbage: OPENAI_GARBAGE,
  };
}
