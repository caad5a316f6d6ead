import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RequestContext } from '../../pipeline/context.ts';
import type { StreamResult } from '../stream-writer.ts';

/** What routes need from the app around them. */
export interface RouteHooks {
  context(request: FastifyRequest, reply: FastifyReply): RequestContext;
  /** A hijacked (streamed) reply ended; onResponse misses it when the client went away. */
  streamed(request: FastifyRequest, result: StreamResult): void;
}
