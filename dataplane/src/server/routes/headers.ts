import type { FastifyReply } from 'fastify';
import { ResponseHeaders } from '../../brand.ts';
import { formatUsd } from '../../accounting/cost.ts';
import type { RequestContext } from '../../pipeline/context.ts';
import type { Served } from '../../pipeline/chat.ts';
import { attemptHeaders } from '../../router/router.ts';

/** X-Gantry-Provider / -Attempts / -Failed, and -Cost when it is known up front. */
export function servedHeaders(ctx: RequestContext, served: Served, costUsd?: number): Record<string, string> {
  const headers: Record<string, string> = { ...ctx.responseHeaders };
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
