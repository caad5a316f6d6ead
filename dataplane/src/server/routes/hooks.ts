import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RequestContext } from '../../pipeline/context.ts';
import type { StreamResult } from '../stream-writer.ts';

/** What routes need from the app around them. */
export interface RouteHooks {
  context(request: FastifyRequest, reply: FastifyReply): RequestContext;
  /** A hijacked (streamed) reply ended: Fastify's own hooks do not see it. */
  streamed(request: FastifyRequest, result: StreamResult): void;
}
