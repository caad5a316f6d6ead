/** How a final upstream failure reaches the caller: the provider's reason, the right status. */
import { GatewayError } from '../errors.ts';
import type { UpstreamError } from '../providers/types.ts';

export function toGatewayError(e: UpstreamError, deployment: string): GatewayError {
  switch (e.kind) {
    case 'rate_limited': {
      const headers: Record<string, string> = {};
      if (e.retryAfterMs !== undefined) headers['retry-after'] = String(Math.ceil(e.retryAfterMs / 1000));
      return new GatewayError('rate_limit_exceeded', `upstream rate limit: ${e.message}`, { headers });
    }
    case 'context_length':
      return new GatewayError('context_length_exceeded', e.message, { param: 'messages' });
    case 'content_policy':
      return new GatewayError('content_policy_violation', e.message);
    case 'bad_request':
      return new GatewayError('invalid_request_error', e.message);
    case 'too_large':
      // 413, not 400: the request is well formed but bigger than this deployment takes; the
      // SDKs do not retry a 413, and the same request cannot fit until it is made smaller.
      return new GatewayError('request_too_large', e.message, { param: 'messages' });
    case 'bad_reference':
      // 404 for a 403 too: whether another tenant's object exists upstream is not the caller's to learn.
      return new GatewayError('not_found', e.message, e.param === undefined ? {} : { param: e.param });
    case 'timeout':
      return new GatewayError('upstream_timeout', `deployment ${deployment}: ${e.message}`);
    case 'oversized':
      // A 502 either way. When the request may have asked for such an event, the same request
      // would likely get it again, so the SDKs are told not to repeat it (each repeat reading
      // 16 MiB), and the caller is told what of its request can do that.
      return e.requestCause === undefined
        ? new GatewayError('upstream_error', `deployment ${deployment} failed: ${oversizedMessage(e)}`)
        : new GatewayError('upstream_error', `deployment ${deployment} failed: ${oversizedMessage(e)}`, {
            headers: { 'x-should-retry': 'false' },
          });
    case 'overloaded': {
      // The provider said "busy, come back" (503, Anthropic's 529): the caller hears the same,
      // not a 502 that reads as a broken answer.
      const headers: Record<string, string> = {};
      if (e.retryAfterMs !== undefined) headers['retry-after'] = String(Math.ceil(e.retryAfterMs / 1000));
      return new GatewayError('service_unavailable', `deployment ${deployment} is overloaded: ${e.message}`, {
        headers,
      });
    }
    default:
      return new GatewayError('upstream_error', `deployment ${deployment} failed: ${e.message}`);
  }
}

/** An `oversized` failure in words: the bound, and what of the request can reach it, if anything. */
export function oversizedMessage(e: UpstreamError): string {
  const bound = `${e.message}, the gateway's bound on one streamed event`;
  return e.requestCause === undefined ? bound : `${bound} (this request's ${e.requestCause} can reach it)`;
}
