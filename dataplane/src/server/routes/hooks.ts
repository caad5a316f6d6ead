import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RequestContext } from '../../pipeline/context.ts';
import type { StreamResult } from '../stream-writer.ts';

/** What routes need from the app around them. */
export interface RouteHooks {
  context(request: FastifyRequest, reply: FastifyReply): RequestContext;
  /**
   * A hijacked (streamed) reply ended: count and log it, and settle a request a fault left
   * unsettled (onResponse misses streams whose client went away).
   */
  streamed(request: FastifyRequest, result: StreamResult): Promise<void>;
  /** Aborted at the shutdown drain deadline: open streams end with an error event. */
  shutdown: AbortSignal;
}
