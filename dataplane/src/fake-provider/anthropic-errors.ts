/** Anthropic's error dialect: `{type: "error", error: {type, message}, request_id}`. */
import { randomId } from './behaviour.ts';
import type { ErrorFormat, ErrorReply } from './types.ts';

const TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

const MESSAGES: Record<string, string> = {
  invalid_request_error: 'Invalid request.',
  authentication_error: 'invalid x-api-key',
  billing_error: 'Your credit balance is too low to access the Anthropic API.',
  permission_error: 'Your API key does not have permission to use the specified resource.',
  not_found_error: 'model: not found',
  request_too_large: 'Request exceeds the maximum allowed number of bytes.',
  rate_limit_error: 'Number of request tokens has exceeded your per-minute rate limit.',
  api_error: 'Internal server error',
  timeout_error: 'Request timed out',
  overloaded_error: 'Overloaded',
};

function typeFor(status: number): string {
  return TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
}

export function anthropicError(
  status: number,
  type: string,
  message: string,
  headers: Record<string, string> = {},
): ErrorReply {
  const requestId = randomId('req_011', 21);
  return {
    status,
    body: { type: 'error', error: { type, message }, request_id: requestId },
    headers: { 'request-id': requestId, ...headers },
  };
}

function resolve(f: { status: number; code?: string; message?: string; missing?: string }): {
  type: string;
  message: string;
} {
  // The Files API's words for a file_id it does not hold or the key may not read.
  if (f.missing !== undefined) return { type: typeFor(f.status), message: `File not found: ${f.missing}` };
  if (f.code === 'context_length_exceeded') {
    return {
      type: 'invalid_request_error',
      message: f.message ?? 'prompt is too long: 210000 tokens > 200000 maximum',
    };
  }
  if (f.code === 'content_policy') {
    return {
      type: 'invalid_request_error',
      message: f.message ?? 'Output blocked by content filtering policy',
    };
  }
  if (f.code === 'overloaded') return { type: 'overloaded_error', message: f.message ?? 'Overloaded' };
  // A code that is itself an Anthropic error type is used as the type.
  const type = f.code && f.code.endsWith('_error') ? f.code : typeFor(f.status);
  return { type, message: f.message ?? MESSAGES[type] ?? 'Error' };
}

export const anthropicErrors: ErrorFormat = {
  unauthorized: () => anthropicError(401, 'authentication_error', 'x-api-key header is required'),
  invalidJson: () => anthropicError(400, 'invalid_request_error', 'The request body is not valid JSON.'),
  status: (f) => {
    const { type, message } = resolve(f);
    const headers: Record<string, string> =
      f.retryAfterSeconds === undefined ? {} : { 'retry-after': String(f.retryAfterSeconds) };
    return anthropicError(f.status, type, message, headers);
  },
  streamError: (f) => {
    const { type, message } = resolve(f);
    return `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type, message } })}\n\n`;
  },
};
