/**
 * Gantry errors in Anthropic's shape. `/v1/messages` answers `{type:'error', error:{type,
 * message}}` so the Anthropic SDK raises its own error classes; the SDK picks the class from
 * the HTTP status, so the status stays Gantry's and only the body changes shape.
 */
import type { ErrorType, GatewayError } from '../../errors.ts';
import type { AnthropicErrorBody, AnthropicErrorType } from './types.ts';

const BY_GANTRY_TYPE: Readonly<Record<ErrorType, AnthropicErrorType>> = {
  invalid_request_error: 'invalid_request_error',
  unsupported_endpoint: 'invalid_request_error',
  context_length_exceeded: 'invalid_request_error',
  content_policy_violation: 'invalid_request_error',
  unsupported_media_type: 'invalid_request_error',
  client_closed_request: 'invalid_request_error',
  authentication_error: 'authentication_error',
  budget_exceeded: 'billing_error',
  guardrail_blocked: 'permission_error',
  permission_denied: 'permission_error',
  model_not_found: 'not_found_error',
  not_found: 'not_found_error',
  method_not_allowed: 'invalid_request_error',
  request_timeout: 'timeout_error',
  headers_too_large: 'request_too_large',
  request_too_large: 'request_too_large',
  rate_limit_exceeded: 'rate_limit_error',
  insufficient_quota: 'rate_limit_error',
  internal_error: 'api_error',
  upstream_error: 'api_error',
  service_unavailable: 'overloaded_error',
  model_unavailable: 'api_error',
  upstream_timeout: 'timeout_error',
  insufficient_storage: 'api_error',
};

/** For types Gantry does not know (e.g. a status relayed as-is), the status decides. */
function byStatus(status: number): AnthropicErrorType {
  if (status === 401) return 'authentication_error';
  if (status === 402) return 'billing_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 413) return 'request_too_large';
  if (status === 429) return 'rate_limit_error';
  if (status === 503 || status === 529) return 'overloaded_error';
  if (status === 504) return 'timeout_error';
  if (status >= 500) return 'api_error';
  return 'invalid_request_error';
}

const ANTHROPIC_TYPES: ReadonlySet<string> = new Set<AnthropicErrorType>([
  'invalid_request_error',
  'authentication_error',
  'billing_error',
  'permission_error',
  'not_found_error',
  'request_too_large',
  'rate_limit_error',
  'timeout_error',
  'api_error',
  'overloaded_error',
]);

/** A Gantry error type is mapped, an Anthropic one kept (relayed upstream errors), else the status decides. */
export function anthropicErrorType(status: number, type: string): AnthropicErrorType {
  if (Object.hasOwn(BY_GANTRY_TYPE, type)) return BY_GANTRY_TYPE[type as ErrorType];
  if (ANTHROPIC_TYPES.has(type)) return type as AnthropicErrorType;
  return byStatus(status);
}

export function toAnthropicError(status: number, type: string, message: string): AnthropicErrorBody {
  return { type: 'error', error: { type: anthropicErrorType(status, type), message } };
}

/** Convenience for the route's error handler: status, headers and body of a GatewayError. */
export function anthropicErrorResponse(err: GatewayError): {
  status: number;
  headers: Record<string, string>;
  body: AnthropicErrorBody;
} {
  return {
    status: err.status,
    headers: err.headers,
    body: toAnthropicError(err.status, err.type, err.message),
  };
}
