/** The one edge where anything thrown becomes the SPEC.md error body. */
import type { FastifyError } from 'fastify';
import { GatewayError } from '../errors.ts';
import { ClientAbortError } from '../router/upstream.ts';

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

export function normaliseError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  if (err instanceof ClientAbortError) return new GatewayError('client_closed_request', err.message);
  const fe = err as FastifyError & { validation?: AjvIssue[] };
  if (fe.validation && fe.validation.length > 0) {
    const issue = fe.validation[0]!;
    const missing = issue.keyword === 'required' ? String(issue.params.missingProperty) : undefined;
    const param = jsonPointerToParam(issue.instancePath, missing) || 'body';
    const detail =
      issue.keyword === 'enum' || issue.keyword === 'const'
        ? `${issue.message}: ${JSON.stringify(issue.params.allowedValues ?? issue.params.allowedValue)}`
        : (issue.message ?? 'is invalid');
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
  }
  if (fe instanceof SyntaxError || fe.statusCode === 400)
    return new GatewayError('invalid_request_error', `body: ${fe.message}`, { param: 'body' });
  return new GatewayError('internal_error', 'internal error', { cause: err });
}
