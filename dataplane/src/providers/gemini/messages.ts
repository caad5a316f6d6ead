/**
 * Canonical messages → Gemini `systemInstruction` + `contents`. Gemini knows two roles
 * (user, model), wants tool results as `functionResponse` parts named after the function
 * (not a call id), and rejects empty `parts`.
 */
import { invalidParam } from '../../errors.ts';
import type { ChatMessage, ContentPart } from '../../formats/openai/types.ts';
import { isRecord, tryParseJson } from '../shared/retry-after.ts';
import type { GeminiContent, GeminiPart, GeminiRole } from './wire.ts';

/**
 * Gemini 3 rejects a replayed `functionCall` without the thought signature it was issued
 * with. The canonical format cannot carry signatures, so replayed calls get Google's
 * documented "skip validation" value instead.
 */
export const SKIP_THOUGHT_SIGNATURE = 'skip_thought_signature_validator';

export interface GeminiConversation {
  systemInstruction?: GeminiContent;
  contents: GeminiContent[];
}

export function toGeminiConversation(messages: ChatMessage[]): GeminiConversation {
  const system: GeminiPart[] = [];
  const contents: GeminiContent[] = [];
  // Latest assistant tool call id → function name; ids may repeat across turns, so a tool
  // result binds to the nearest preceding call with its id.
  const callNames = new Map<string, string>();

  const append = (role: GeminiRole, parts: GeminiPart[]): void => {
    if (parts.length === 0) return;
    const last = contents[contents.length - 1];
    // Gemini expects alternating turns; consecutive same-role messages become one turn.
    if (last?.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };

  messages.forEach((msg, i) => {
    const where = `messages[${i}]`;
    switch (msg.role) {
      case 'system':
      case 'developer':
        // Gemini has a single system instruction; later system messages join it in order.
        system.push(...toParts(msg.content, where).filter((p) => p.text !== undefined));
        return;
      case 'user':
        append('user', toParts(msg.content, where));
        return;
      case 'assistant':
        append('model', assistantParts(msg, where, callNames));
        return;
      case 'tool':
        append('user', [toolResultPart(msg, where, callNames)]);
        return;
      default:
        throw invalidParam(`${where}.role`, `unsupported role '${String(msg.role)}'`);
    }
  });

  const out: GeminiConversation = { contents };
  if (system.length > 0) out.systemInstruction = { parts: system };
  return out;
}

function assistantParts(msg: ChatMessage, where: string, callNames: Map<string, string>): GeminiPart[] {
  const parts = toParts(msg.content, where);
  (msg.tool_calls ?? []).forEach((call, k) => {
    callNames.set(call.id, call.function.name);
    const args = tryParseJson(call.function.arguments);
    const part: GeminiPart = {
      functionCall: { name: call.function.name, args: isRecord(args) ? args : {} },
    };
    // Only the first call of a turn carries a signature on Gemini's side as well.
    if (k === 0) part.thoughtSignature = SKIP_THOUGHT_SIGNATURE;
    parts.push(part);
  });
  return parts;
}

function toolResultPart(msg: ChatMessage, where: string, callNames: Map<string, string>): GeminiPart {
  const name =
    (msg.tool_call_id !== undefined ? callNames.get(msg.tool_call_id) : undefined) ??
    (typeof msg.name === 'string' ? msg.name : undefined);
  if (name === undefined) {
    throw invalidParam(`${where}.tool_call_id`, 'does not match a tool call of an earlier assistant message');
  }
  return { functionResponse: { name, response: toolResponse(textOf(msg.content)) } };
}

/** Gemini wants the function's response as an object; anything else is wrapped. */
export function toolResponse(text: string): Record<string, unknown> {
  const parsed = tryParseJson(text);
  if (isRecord(parsed)) return parsed;
  return { result: parsed === undefined ? text : parsed };
}

function textOf(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p) => (p.type === 'text' && typeof p.text === 'string' ? p.text : '')).join('');
}

function toParts(content: ChatMessage['content'], where: string): GeminiPart[] {
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }];
  if (!Array.isArray(content)) return [];
  const parts: GeminiPart[] = [];
  content.forEach((part, j) => {
    const p = contentPart(part, `${where}.content[${j}]`);
    if (p) parts.push(p);
  });
  return parts;
}

function contentPart(part: ContentPart, where: string): GeminiPart | undefined {
  if (part.type === 'text') {
    const text = typeof part.text === 'string' ? part.text : '';
    return text === '' ? undefined : { text };
  }
  if (part.type === 'image_url') {
    const url = isRecord(part.image_url) ? part.image_url.url : undefined;
    if (typeof url !== 'string') throw invalidParam(`${where}.image_url.url`, 'must be a string');
    return mediaPart(url, `${where}.image_url.url`);
  }
  if (part.type === 'input_audio' && isRecord(part.input_audio)) {
    const { data, format } = part.input_audio;
    if (typeof data === 'string' && typeof format === 'string') {
      return { inlineData: { mimeType: `audio/${format}`, data } };
    }
  }
  if (part.type === 'file' && isRecord(part.file) && typeof part.file.file_data === 'string') {
    return mediaPart(part.file.file_data, `${where}.file.file_data`);
  }
  throw invalidParam(where, `content part type '${part.type}' is not supported by this model`);
}

const DATA_URL = /^data:([^;,]+)((?:;[^;,]*)*),(.*)$/s;

/** Data URLs (images, PDFs) travel inline; http(s) URLs are handed to Gemini to fetch. */
export function mediaPart(url: string, where: string): GeminiPart {
  const m = DATA_URL.exec(url);
  if (m) {
    const mimeType = (m[1] as string).toLowerCase();
    const payload = m[3] as string;
    const data = /;base64/i.test(m[2] as string)
      ? payload
      : Buffer.from(decodeURIComponent(payload), 'utf8').toString('base64');
    return { inlineData: { mimeType, data } };
  }
  if (/^https?:\/\//i.test(url)) return { fileData: { mimeType: guessMimeType(url), fileUri: url } };
  throw invalidParam(where, 'must be an http(s) URL or a data URL');
}

const EXTENSION_TYPES: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  heic: 'image/heic',
  heif: 'image/heif',
  pdf: 'application/pdf',
};

/** fileData needs a MIME type; the URL's extension is all we know, JPEG is the likeliest image. */
export function guessMimeType(url: string): string {
  let path = url;
  try {
    path = new URL(url).pathname;
  } catch {
    // keep the raw string
  }
  const ext = /\.([a-z0-9]+)$/i.exec(path)?.[1]?.toLowerCase();
  return (ext !== undefined ? EXTENSION_TYPES[ext] : undefined) ?? 'image/jpeg';
}
