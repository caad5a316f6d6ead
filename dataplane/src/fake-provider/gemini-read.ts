/** Gemini: error dialect, and reading/validating a generateContent request. */
import { asArray, capOf, isRecord, stringChars } from './behaviour.ts';
import type { Conversation, ErrorFormat, ErrorReply, ToolChoiceSpec, ToolSpec } from './types.ts';

type Obj = Record<string, unknown>;

const STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  500: 'INTERNAL',
  501: 'NOT_IMPLEMENTED',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

export function geminiError(code: number, message: string, status?: string, details?: unknown[]): ErrorReply {
  const error: Obj = {
    code,
    message,
    status: status ?? STATUS[code] ?? (code >= 500 ? 'INTERNAL' : 'INVALID_ARGUMENT'),
  };
  if (details) error.details = details;
  return { status: code, body: { error } };
}

function geminiStatus(f: {
  status: number;
  code?: string;
  message?: string;
  retryAfterSeconds?: number;
  missing?: string;
}): ErrorReply {
  // Gemini does not say whether a file it refuses exists: a 403 PERMISSION_DENIED either way.
  if (f.missing !== undefined)
    return geminiError(
      f.status,
      `You do not have permission to access the File ${f.missing} or it may not exist.`,
    );
  // Gemini sends no retry-after header: the delay travels as a google.rpc.RetryInfo detail.
  const details =
    f.retryAfterSeconds === undefined
      ? undefined
      : [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${f.retryAfterSeconds}s` }];
  if (f.code === 'context_length_exceeded') {
    const msg =
      f.message ?? 'The input token count (1100000) exceeds the maximum number of tokens allowed (1048576).';
    return geminiError(f.status, msg, undefined, details);
  }
  if (f.code === 'content_policy') {
    return geminiError(
      f.status,
      f.message ?? 'The request was blocked because of safety reasons.',
      undefined,
      details,
    );
  }
  if (f.code === 'overloaded') {
    return geminiError(
      f.status,
      f.message ?? 'The model is overloaded. Please try again later.',
      undefined,
      details,
    );
  }
  const defaults: Record<number, string> = {
    429: 'Resource has been exhausted (e.g. check quota).',
    500: 'An internal error has occurred. Please retry.',
    503: 'The service is currently unavailable.',
  };
  const status = f.code && /^[A-Z_]+$/.test(f.code) ? f.code : undefined;
  return geminiError(f.status, f.message ?? defaults[f.status] ?? 'Request failed.', status, details);
}

export const geminiErrors: ErrorFormat = {
  unauthorized: () =>
    geminiError(
      403,
      "Method doesn't allow unregistered callers (callers without established identity). " +
        'Please use API Key or other form of API consumer identity to call this API.',
    ),
  invalidJson: () => geminiError(400, 'Invalid JSON payload received. Unexpected token.'),
  status: geminiStatus,
  streamError: (f) => `data: ${JSON.stringify(geminiStatus(f).body)}\r\n\r\n`,
};

/** The REST API accepts both lowerCamel and snake_case field names. */
export function field(o: Obj, camel: string): unknown {
  return o[camel] ?? o[camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)];
}

export function partsOf(content: unknown): Obj[] {
  return isRecord(content) ? asArray(content.parts).filter(isRecord) : [];
}

function textOf(parts: Obj[]): string {
  return parts
    .filter((p) => typeof p.text === 'string' && p.thought !== true)
    .map((p) => p.text as string)
    .join(' ');
}

function measure(parts: Obj[]): { chars: number; images: number } {
  let chars = 0;
  let images = 0;
  for (const p of parts) {
    if (typeof p.text === 'string') chars += p.text.length;
    if (field(p, 'inlineData') !== undefined || field(p, 'fileData') !== undefined) images += 1;
    const fr = field(p, 'functionResponse');
    if (isRecord(fr)) chars += stringChars(fr.response);
  }
  return { chars, images };
}

function readTools(body: Obj): ToolSpec[] {
  const out: ToolSpec[] = [];
  for (const t of asArray(body.tools).filter(isRecord)) {
    for (const d of asArray(field(t, 'functionDeclarations')).filter(isRecord)) {
      if (typeof d.name === 'string')
        out.push({ name: d.name, schema: d.parameters ?? field(d, 'parametersJsonSchema') });
    }
  }
  return out;
}

function readToolChoice(body: Obj): ToolChoiceSpec {
  const config = field(body, 'toolConfig');
  const calling = isRecord(config) ? field(config, 'functionCallingConfig') : undefined;
  if (!isRecord(calling)) return 'auto';
  if (calling.mode === 'NONE') return 'none';
  if (calling.mode === 'ANY') {
    const allowed = asArray(field(calling, 'allowedFunctionNames'));
    return typeof allowed[0] === 'string' ? { name: allowed[0] } : 'required';
  }
  return 'auto';
}

const hasPart = (parts: Obj[], name: string): boolean => parts.some((p) => field(p, name) !== undefined);

export function readGeminiConversation(body: Obj): Conversation {
  const contents = asArray(body.contents).filter(isRecord);
  const system = measure(partsOf(field(body, 'systemInstruction')));
  let chars = system.chars;
  let images = system.images;
  let lastUserText = '';
  for (const c of contents) {
    const parts = partsOf(c);
    const size = measure(parts);
    chars += size.chars;
    images += size.images;
    const text = textOf(parts);
    if (c.role !== 'model' && text.trim() !== '') lastUserText = text;
  }
  const last = contents.at(-1);
  const lastParts = partsOf(last);
  const config = field(body, 'generationConfig');
  return {
    lastUserText,
    promptChars: chars,
    images,
    // A trailing model turn is continued the way Anthropic continues a prefill.
    prefill: last?.role === 'model' ? textOf(lastParts) : undefined,
    lastIsToolResult: hasPart(lastParts, 'functionResponse'),
    tools: readTools(body),
    toolChoice: readToolChoice(body),
    maxTokens: capOf(isRecord(config) ? field(config, 'maxOutputTokens') : undefined),
  };
}

export function validateGemini(body: Obj): ErrorReply | undefined {
  const contents = asArray(body.contents);
  if (contents.length === 0) {
    return geminiError(400, '* GenerateContentRequest.contents: contents is not specified\n');
  }
  for (const [i, c] of contents.entries()) {
    if (!isRecord(c)) return geminiError(400, `Invalid value at 'contents[${i}]'`);
    if (c.role !== undefined && c.role !== 'user' && c.role !== 'model') {
      return geminiError(400, 'Please use a valid role: user, model.');
    }
    const parts = partsOf(c);
    if (parts.length === 0) {
      return geminiError(
        400,
        `* GenerateContentRequest.contents[${i}].parts: contents.parts must not be empty.\n`,
      );
    }
    const calls = parts.filter((p) => field(p, 'functionCall') !== undefined).length;
    const next = contents[i + 1];
    if (calls > 0 && next !== undefined) {
      const responses = partsOf(next).filter((p) => field(p, 'functionResponse') !== undefined).length;
      if (responses !== calls) {
        return geminiError(
          400,
          'Please ensure that the number of function response parts is equal to the number of function call ' +
            'parts of the function call turn.',
        );
      }
    }
  }
  return undefined;
}
