/** Anthropic error answers (`{type:'error', error:{type, message}}`) → UpstreamError. */
import { isRecord } from '../../formats/anthropic/util.ts';
import { retryAfterMs as parseRetryAfter } from '../shared/retry-after.ts';
import type { UpstreamError, UpstreamErrorKind } from '../types.ts';

/**
 * Anthropic reports an over-long prompt as a plain invalid_request_error ("prompt is too
 * long: N tokens > M maximum", "input length and `max_tokens` exceed context limit"); only
 * the message tells it apart from other 400s.
 */
const CONTEXT_LENGTH =
  /prompt is too long|exceeds? (the )?context (limit|window)|context window|too many tokens/i;

/** A refusal on content ("Output blocked by content filtering policy") is also a plain 400. */
const CONTENT_POLICY = /content (filtering )?policy/i;

/** Kind from Anthropic's error type alone: used for in-stream `error` events, which have no status. */
export function kindOfErrorType(type: string, message: string): UpstreamErrorKind {
  switch (type) {
    case 'overloaded_error':
      return 'overloaded';
    case 'rate_limit_error':
      return 'rate_limited';
    case 'authentication_error':
    case 'permission_error':
    case 'billing_error':
      return 'auth';
    case 'not_found_error':
      return 'not_found';
    case 'request_too_large':
      return 'context_length';
    case 'timeout_error':
      return 'timeout';
    case 'invalid_request_error':
      if (CONTEXT_LENGTH.test(message)) return 'context_length';
      return CONTENT_POLICY.test(message) ? 'content_policy' : 'bad_request';
    default:
      return 'server';
  }
}

/** The HTTP status Anthropic uses for an error type; in-stream errors report it as status. */
export const STATUS_OF_ERROR_TYPE: Readonly<Record<string, number>> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

function kindOfStatus(status: number, type: string, message: string): UpstreamErrorKind {
  if (status === 429) return 'rate_limited';
  if (status === 529 || status === 503 || type === 'overloaded_error') return 'overloaded';
  if (status >= 500) return 'server';
  // 402 billing_error: the account behind the deployment cannot pay, as broken as a bad key.
  if (status === 401 || status === 402 || status === 403) return 'auth';
  if (status === 404) return 'not_found';
  if (status === 413 || CONTEXT_LENGTH.test(message)) return 'context_length';
  if (status === 408) return 'timeout';
  if (CONTENT_POLICY.test(message)) return 'content_policy';
  return 'bad_request';
}

const header = (headers: Record<string, string | string[] | undefined>, name: string): string | undefined => {
  const value = headers[name] ?? headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
};

/**
 * `retry-after` is either delay-seconds or an HTTP date (RFC 9110 §10.2.3): the parser every
 * adapter uses, so a negative value is no advice here either (it was read as a date in 2001,
 * which made it "retry at once").
 */
export function retryAfterMs(value: string | undefined, now: number = Date.now()): number | undefined {
  return value === undefined ? undefined : parseRetryAfter({ 'retry-after': value }, now);
}

/** Anthropic's error body, or undefined when the body is not one (proxies, HTML pages). */
function parseErrorBody(body: string): { type: string; message: string } | undefined {
  try {
    const parsed: unknown = JSON.parse(body);
    const error = isRecord(parsed) ? parsed['error'] : undefined;
    if (!isRecord(error)) return undefined;
    return {
      type: typeof error['type'] === 'string' ? error['type'] : '',
      message: typeof error['message'] === 'string' ? error['message'] : '',
    };
  } catch {
    return undefined;
  }
}

export function classifyAnthropicError(
  status: number,
  headers: Record<string, string | string[] | undefined>,
  body: string,
  now: number = Date.now(),
): UpstreamError {
  const parsed = parseErrorBody(body);
  const message = parsed?.message || body.trim().slice(0, 500) || `Anthropic answered HTTP ${status}`;
  const error: UpstreamError = { kind: kindOfStatus(status, parsed?.type ?? '', message), status, message };
  // The error type is Anthropic's code (`request_too_large`, `not_found_error`): what tells a
  // 413 over the byte limit from a proxy's, for the request-fault rule.
  if (parsed?.type) error.code = parsed.type;
  const delay = retryAfterMs(header(headers, 'retry-after'), now);
  if (delay !== undefined) error.retryAfterMs = delay;
  return error;
}
