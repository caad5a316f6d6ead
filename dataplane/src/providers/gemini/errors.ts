/**
 * Gemini error answers → UpstreamError. Google's body is `{error: {code, message, status,
 * details}}` (Vertex-style endpoints wrap it in a one-element array); `status` is the
 * google.rpc code name, which is more telling than the HTTP status alone.
 */
import type { UpstreamError, UpstreamErrorKind } from '../types.ts';
import { isRecord, retryAfterMs, tryParseJson } from '../shared/retry-after.ts';

type Headers = Record<string, string | string[] | undefined>;

interface GoogleError {
  code: number | undefined;
  message: string | undefined;
  status: string | undefined;
  details: unknown[];
}

/** Pull Google's error object out of a parsed body, if there is one. */
export function readGoogleError(body: unknown): GoogleError | undefined {
  const root = Array.isArray(body) ? body[0] : body;
  if (!isRecord(root) || !isRecord(root.error)) return undefined;
  const e = root.error;
  return {
    code: typeof e.code === 'number' ? e.code : undefined,
    message: typeof e.message === 'string' ? e.message : undefined,
    status: typeof e.status === 'string' ? e.status : undefined,
    details: Array.isArray(e.details) ? e.details : [],
  };
}

const CONTEXT_LENGTH =
  /exceeds the maximum number of tokens|input token count|too many tokens|token limit|context (length|window)/i;

/** Invalid keys come back as 400 INVALID_ARGUMENT, recognisable only by reason or wording. */
const BAD_KEY = /api key (not valid|expired|invalid)|API_KEY_INVALID/i;

function kindOf(status: number, e: GoogleError | undefined, details: string): UpstreamErrorKind {
  const rpc = e?.status;
  const message = e?.message ?? '';
  if (status === 429 || rpc === 'RESOURCE_EXHAUSTED') return 'rate_limited';
  if (status === 503 || rpc === 'UNAVAILABLE') return 'overloaded';
  if (status >= 500 || rpc === 'INTERNAL' || rpc === 'DEADLINE_EXCEEDED') return 'server';
  if (status === 401 || status === 403 || rpc === 'UNAUTHENTICATED' || rpc === 'PERMISSION_DENIED')
    return 'auth';
  if (BAD_KEY.test(message) || BAD_KEY.test(details)) return 'auth';
  // Region/billing preconditions ("free tier is not available in your country"): this
  // deployment cannot serve anyone, another one may.
  if (rpc === 'FAILED_PRECONDITION') return 'auth';
  if (status === 404 || rpc === 'NOT_FOUND') return 'not_found';
  if (CONTEXT_LENGTH.test(message)) return 'context_length';
  return 'bad_request';
}

/** google.rpc.RetryInfo.retryDelay is a protobuf Duration in JSON: "12s", "0.5s". */
export function retryInfoMs(details: unknown[]): number | undefined {
  for (const d of details) {
    if (!isRecord(d) || typeof d['@type'] !== 'string' || !d['@type'].endsWith('google.rpc.RetryInfo'))
      continue;
    const m = typeof d.retryDelay === 'string' ? /^(\d+(?:\.\d+)?)s$/.exec(d.retryDelay) : null;
    if (m) return Math.round(Number(m[1]) * 1000);
  }
  return undefined;
}

/** google.rpc.ErrorInfo's reason: an UPPER_SNAKE_CASE name of the cause. */
function errorReason(details: unknown[]): string | undefined {
  for (const d of details) {
    if (!isRecord(d) || typeof d['@type'] !== 'string' || !d['@type'].endsWith('google.rpc.ErrorInfo'))
      continue;
    if (typeof d.reason === 'string' && d.reason !== '') return d.reason;
  }
  return undefined;
}

export function classifyError(status: number, headers: Headers, body: string): UpstreamError {
  return fromGoogleError(status, readGoogleError(tryParseJson(body)), headers);
}

/** Shared by HTTP errors and errors Gemini reports inside an SSE stream (status from `code`). */
export function fromGoogleError(
  status: number,
  e: GoogleError | undefined,
  headers: Headers = {},
): UpstreamError {
  const httpStatus = status > 0 ? status : (e?.code ?? 0);
  const kind = kindOf(httpStatus, e, JSON.stringify(e?.details ?? []));
  const error: UpstreamError = {
    kind,
    status: httpStatus,
    // A body that is not Google's error JSON (a proxy's HTML page) is not shown to callers.
    message: e?.message ?? `Gemini answered HTTP ${httpStatus}`,
  };
  // ErrorInfo's reason (API_KEY_INVALID, SERVICE_DISABLED) says whose fault it is more surely
  // than the words do: the router reads it as the error's code.
  const reason = errorReason(e?.details ?? []);
  if (reason !== undefined) error.code = reason;
  if (kind === 'rate_limited') {
    const delay = retryInfoMs(e?.details ?? []) ?? retryAfterMs(headers);
    if (delay !== undefined) error.retryAfterMs = delay;
  }
  return error;
}
