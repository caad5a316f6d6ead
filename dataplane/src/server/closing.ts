import { GatewayError } from '../errors.ts';

/**
 * The answer to a request that reaches a listener after it began closing (on a connection
 * opened before): the gateway's own 503 in SPEC.md's shape, where Fastify's built-in one has
 * neither that body nor a request id.
 */
export const notAccepting = (): GatewayError =>
  new GatewayError(
    'service_unavailable',
    'the gateway is shutting down and takes no new requests; retry on a new connection',
  );
