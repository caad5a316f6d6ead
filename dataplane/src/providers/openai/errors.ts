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
