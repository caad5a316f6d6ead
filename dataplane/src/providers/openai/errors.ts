import type { UpstreamError, UpstreamErrorKind } from '../types.ts';
import { isRecord, retryAfterMs, tryParseJson } from '../shared/retry-after.ts';

const CONTEXT_CODES = new Set(['context_length_exceeded', 'string_above_max_length']);
const POLICY_CODES = new Set(['content_filter', 'content_policy_violation', 'ResponsibleAIPolicyViolation']);

/** OpenAI (and Azure, vLLM, Groq, ...) error bodies: {error: {message, type, code, param}}. */
export function classifyOpenAIError(
  status: number,
  headers: Record<string, string | string[] | undefined>,
  body: string,
): UpstreamError {
  const parsed = tryParseJson(body);
  const err = isRecord(parsed) && isRecord(parsed.error) ? parsed.error : undefined;
  const message =
    (err && typeof err.message === 'string' && err.message) ||
    (isRecord(parsed) && typeof parsed.message === 'string' && parsed.message) ||
    `upstream answered ${status}`;
  const code = err && typeof err.code === 'string' ? err.code : '';
  const param = err && typeof err.param === 'string' && err.param !== '' ? err.param : undefined;
  return {
    kind: kindOf(status, code, message),
    status,
    message,
    retryAfterMs: retryAfterMs(headers),
    ...(param !== undefined && { param }),
    ...(code !== '' && { code }),
  };
}

/**
 * The HTTP status an OpenAI-style error `type` stands for: an error event inside a stream has
 * no status of its own (the stream's was 200). OpenAI's own types, and the exception names
 * vLLM and other OpenAI-compatible servers send.
 */
const STATUS_OF_TYPE: Readonly<Record<string, number>> = {
  invalid_request_error: 400,
  BadRequestError: 400,
  authentication_error: 401,
  AuthenticationError: 401,
  permission_error: 403,
  PermissionDeniedError: 403,
  not_found_error: 404,
  NotFoundError: 404,
  rate_limit_error: 429,
  // OpenAI types its 429s by the limit hit.
  requests: 429,
  tokens: 429,
  insufficient_quota: 429,
  RateLimitError: 429,
  server_error: 500,
  api_error: 500,
  InternalServerError: 500,
  service_unavailable_error: 503,
  overloaded_error: 503,
  ServiceUnavailableError: 503,
};

/**
 * An `{error: {...}}` event inside an OpenAI-style stream, classified like the same error
 * answered as HTTP: a status in `code` (vLLM sends one) or the status its `type` stands for,
 * then the same rules. Only an error that says nothing (no status, unknown type) is taken for
 * the server's: every in-stream error counted as one, so a caller whose prompt the provider
 * rejected mid-stream (invalid_request_error) could eject the deployment with three requests.
 */
export function classifyOpenAIStreamError(err: Record<string, unknown>): UpstreamError {
  const message =
    typeof err.message === 'string' && err.message !== '' ? err.message : 'upstream stream error';
  const code = typeof err.code === 'string' ? err.code : '';
  const type = typeof err.type === 'string' ? err.type : '';
  const numeric = typeof err.code === 'number' ? err.code : typeof err.status === 'number' ? err.status : 0;
  const status = numeric >= 400 && numeric <= 599 ? numeric : (STATUS_OF_TYPE[type] ?? 500);
  return { kind: kindOf(status, code, message), status, message };
}

function kindOf(status: number, code: string, message: string): UpstreamErrorKind {
  if (status === 429) return 'rate_limited';
  if (status === 503 || status === 529) return 'overloaded';
  if (status >= 500) return 'server';
  if (status === 401 || status === 403) return 'auth';
  if (status === 404) return 'not_found';
  if (CONTEXT_CODES.has(code) || /maximum context length|context length|too many tokens/i.test(message))
    return 'context_length';
  if (POLICY_CODES.has(code) || /content (management )?policy/i.test(message)) return 'content_policy';
  if (status === 413) return 'context_length';
  return 'bad_request';
}
