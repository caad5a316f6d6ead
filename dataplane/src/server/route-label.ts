import type { FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route's name in metrics, the request log and trace spans, when its URL pattern is
     * shared with another route (GET and POST /v1/models/* are a lookup and a model call).
     */
    metricsRoute?: string;
  }
}

/** The stable label a request is counted and logged under. */
export const routeLabel = (request: FastifyRequest): string =>
  request.routeOptions.config.metricsRoute ?? request.routeOptions.url ?? 'unknown';
