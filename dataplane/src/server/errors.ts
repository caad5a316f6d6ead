/** The one edge where anything thrown becomes the SPEC.md error body. */
import type { FastifyError } from 'fastify';
import { GatewayError, type ErrorType } from '../errors.ts';
import { ClientAbortError } from '../router/upstream.ts';
import { MAX_PATH_PARAM_CHARS } from './limits.ts';

/** `/messages/0/role` → `messages[0].role` */
export function jsonPointerToParam(pointer: string, missing?: string): string {
  const parts = pointer.split('/').filter(Boolean);
  if (missing) parts.push(missing);
  return parts.reduce((acc, p) => (/^\d+$/.test(p) ? `${acc}[${p}]` : acc ? `${acc}.${p}` : p), '');
}

interface AjvIssue {
  instancePath: string;
  message?: string;
  keyword: string;
  params: Record<string, unknown>;
}

const issueParam = (i: AjvIssue): string =>
  jsonPointerToParam(
    i.instancePath,
    i.keyword === 'required' ? String(i.params.missingProperty) : undefined,
  ) || 'body';
const depth = (i: AjvIssue): number => i.instancePath.split('/').length + (i.keyword === 'required' ? 1 : 0);

/**
 * A failed union (`anyOf`) reports one issue per alternative. The deepest issue is where the
 * value went wrong (an array of parts with a bad URL: the URL, not "must be string"), and
 * the alternatives at that spot are listed together rather than only the first one tried.
 */
function explain(issues: readonly AjvIssue[]): { param: string; detail: string } {
  const concrete = issues.filter((i) => i.keyword !== 'anyOf' && i.keyword !== 'oneOf');
  const pool = concrete.length > 0 ? concrete : issues;
  const deepest = pool.reduce((best, i) => (depth(i) > depth(best) ? i : best));
  const param = issueParam(deepest);
  const here = pool.filter((i) => issueParam(i) === param);
  const allowed = here.flatMap((i): string[] => {
    if (i.keyword === 'const') return [JSON.stringify(i.params.allowedValue)];
    if (i.keyword === 'enum') return (i.params.allowedValues as unknown[]).map((v) => JSON.stringify(v));
    if (i.keyword === 'type') return [String(i.params.type)];
    return [];
  });
  const alternatives = [...new Set(allowed)];
  const others = here.filter((i) => i.keyword !== 'const' && i.keyword !== 'enum' && i.keyword !== 'type');
  const reasons = [...new Set(others.map((i) => i.message ?? 'is invalid'))];
  if (alternatives.length > 0)
    reasons.unshift(
      alternatives.length === 1 ? `must be ${alternatives[0]}` : `must be one of ${alternatives.join(', ')}`,
    );
  return { param, detail: reasons.join('; or ') };
}

export function normaliseError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  if (err instanceof ClientAbortError) return new GatewayError('client_closed_request', err.message);
  // `throw null` / `throw undefined` must still become a 500, not crash the error edge.
  const fe = (err ?? {}) as FastifyError & { validation?: AjvIssue[] };
  if (fe.validation && fe.validation.length > 0) {
    const { param, detail } = explain(fe.validation);
    return new GatewayError('invalid_request_error', `${param}: ${detail}`, { param });
  }
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new GatewayError('request_too_large', 'request body exceeds the size limit');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new GatewayError('unsupported_media_type', 'content-type must be application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new GatewayError('invalid_request_error', 'body: must be valid JSON', { param: 'body' });
    // Fastify's message holds the whole path: up to the header limit, echoed back.
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new GatewayError(
        'invalid_request_error',
        `a path segment is longer than ${MAX_PATH_PARAM_CHARS} characters`,
        { status: 414 },
      );
    case 'FST_ERR_BAD_URL':
      return new GatewayError(
        'invalid_request_error',
        'the request path is not a valid URL (bad percent-encoding)',
      );
  }
  if (fe instanceof SyntaxError || fe.statusCode === 400)
    return new GatewayError('invalid_request_error', `body: ${fe.message}`, { param: 'body' });
  // Any other client error Fastify raises keeps its status and gets the SPEC.md body.
  const status = fe.statusCode;
  if (typeof status === 'number' && status > 400 && status < 500)
    return new GatewayError(CLIENT_ERROR_TYPES[status] ?? 'invalid_request_error', fe.message, { status });
  return new GatewayError('internal_error', 'internal error', { cause: err });
}

const CLIENT_ERROR_TYPES: Partial<Record<number, ErrorType>> = {
  404: 'not_found',
  405: 'method_not_allowed',
  408: 'request_timeout',
  413: 'request_too_large',
  415: 'unsupported_media_type',
  431: 'headers_too_large',
};
