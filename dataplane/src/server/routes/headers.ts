import type { FastifyReply } from 'fastify';
import { ResponseHeaders } from '../../brand.ts';
import { formatUsd } from '../../accounting/cost.ts';
import type { RequestContext } from '../../pipeline/context.ts';
import type { Served } from '../../pipeline/chat.ts';
import { attemptHeaders } from '../../router/router.ts';

/** The request id, under the gateway's name and the common one, on every answer. */
export const REQUEST_ID_HEADER = 'x-request-id';

/** X-Gantry-Provider / -Attempts / -Failed, and -Cost when it is known up front. */
export function servedHeaders(ctx: RequestContext, served: Served, costUsd?: number): Record<string, string> {
  return withServed({ ...ctx.responseHeaders }, ctx, served, costUsd);
}

/**
 * `servedHeaders` of a hijacked stream, which writes its own head: the request id headers too,
 * which every reply Fastify sends gets from the onRequest hook (app.ts). They are not set on
 * the raw response there because any header set on it sends every reply through Node's slower
 * `writeHead` (each of Fastify's headers then goes through `setHeader` again).
 */
export function streamHeaders(ctx: RequestContext, served: Served): Record<string, string> {
  const headers: Record<string, string> = {
    [ResponseHeaders.requestId]: ctx.requestId,
    [REQUEST_ID_HEADER]: ctx.requestId,
  };
  return withServed(Object.assign(headers, ctx.responseHeaders), ctx, served, undefined);
}

function withServed(
  headers: Record<string, string>,
  ctx: RequestContext,
  served: Served,
  costUsd: number | undefined,
): Record<string, string> {
  headers[ResponseHeaders.provider] = served.deployment?.name ?? 'cache';
  // attemptHeaders' fields, without its object on the common single-attempt answer.
  const log = served.log;
  if (log.attempts > 1 || log.failed.length > 0) Object.assign(headers, attemptHeaders(log));
  if (costUsd !== undefined) headers[ResponseHeaders.cost] = formatUsd(costUsd);
  return headers;
}

/**
 * `servedHeaders` set on a reply Fastify sends (not a hijacked stream), in the same order,
 * without first copying the stages' headers into an object of their own.
 */
export function replyServedHeaders(
  reply: FastifyReply,
  ctx: RequestContext,
  served: Served,
  costUsd?: number,
): FastifyReply {
  reply.headers(ctx.responseHeaders);
  reply.header(ResponseHeaders.provider, served.deployment?.name ?? 'cache');
  const log = served.log;
  if (log.attempts > 1 || log.failed.length > 0) reply.headers(attemptHeaders(log));
  if (costUsd !== undefined) reply.header(ResponseHeaders.cost, formatUsd(costUsd));
  return reply;
}
