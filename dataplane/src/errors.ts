/**
 * One error type for everything the gateway answers with, a closed set of codes, and one
 * code → status map. Anything thrown is normalised into the SPEC.md body at one edge.
 */
export const ErrorStatus = {
  invalid_request_error: 400,
  unsupported_endpoint: 400,
  context_length_exceeded: 400,
  content_policy_violation: 400,
  authentication_error: 401,
  budget_exceeded: 402,
  guardrail_blocked: 403,
  permission_denied: 403,
  model_not_found: 404,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  request_too_large: 413,
  unsupported_media_type: 415,
  rate_limit_exceeded: 429,
  /** A quota on what a tenant keeps (not a rate): OpenAI's type and status for the same. */
  insufficient_quota: 429,
  headers_too_large: 431,
  client_closed_request: 499,
  internal_error: 500,
  upstream_error: 502,
  service_unavailable: 503,
  /** A configured model this gateway instance does not serve (its deployments are left out). */
  model_unavailable: 503,
  upstream_timeout: 504,
  /** The gateway's own storage is full for every tenant (RFC 4918). */
  insufficient_storage: 507,
} as const;

export type ErrorType = keyof typeof ErrorStatus;

export interface ErrorBody {
  error: { message: string; type: string; code: number; param?: string | undefined };
}

export class GatewayError extends Error {
  readonly type: ErrorType;
  readonly status: number;
  readonly param: string | undefined;
  readonly headers: Record<string, string>;
  /**
   * The model (or agent) name a lookup refused, carried by the error itself so the refusal of a
   * made-up name is counted and recorded (pipeline/unknown-model.ts) even where the route had
   * not yet noted the name it was asked for.
   */
  readonly refusedModel: string | undefined;

  constructor(
    type: ErrorType,
    message: string,
    opts: {
      param?: string;
      headers?: Record<string, string>;
      status?: number;
      cause?: unknown;
      refusedModel?: string;
    } = {},
  ) {
    super(message, { cause: opts.cause });
    this.name = 'GatewayError';
    this.type = type;
    this.status = opts.status ?? ErrorStatus[type];
    this.param = opts.param;
    this.headers = opts.headers ?? {};
    this.refusedModel = opts.refusedModel;
  }

  toBody(): ErrorBody {
    const error: ErrorBody['error'] = { message: this.message, type: this.type, code: this.status };
    if (this.param !== undefined) error.param = this.param;
    return { error };
  }
}

export const invalidParam = (param: string, message: string): GatewayError =>
  new GatewayError('invalid_request_error', `${param}: ${message}`, { param });
