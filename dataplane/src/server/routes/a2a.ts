/** `POST /v1/a2a/{agent}/message/send`: an A2A JSON-RPC call proxied to a configured agent. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { GatewayError } from '../../errors.ts';
import { readSendCall, RpcCodes, RpcError } from '../../pipeline/a2a/jsonrpc.ts';
import type { A2aOwnership } from '../../pipeline/a2a/owners.ts';
import { runA2a } from '../../pipeline/a2a/run.ts';
import type { RequestContext } from '../../pipeline/context.ts';
import type { PipelineDeps } from '../../pipeline/forward.ts';
import { settle } from '../../pipeline/settlement.ts';
import { checkModelName } from '../model-name.ts';
import { replyServedHeaders } from './headers.ts';
import type { RouteHooks } from './hooks.ts';

interface AgentParams {
  Params: { agent: string };
}

const PREFIX = '/v1/a2a/';
const SEND = 'message/send';

/** The path as the router matches it: without the query, or a raw `#fragment` a client sent. */
const pathOf = (url: string): string => url.split(/[?#]/, 1)[0]!;

/**
 * The agent a path under /v1/a2a/ names when it has the send route's shape (one segment, then
 * `message/send`), decoded as the router decodes a parameter; undefined for any other shape.
 */
export function sendPathAgent(url: string): string | undefined {
  const path = pathOf(url);
  if (!path.startsWith(PREFIX)) return undefined;
  const slash = path.indexOf('/', PREFIX.length);
  if (slash === -1 || path.slice(slash + 1) !== SEND) return undefined;
  try {
    return decodeURIComponent(path.slice(PREFIX.length, slash));
  } catch {
    return undefined;
  }
}

/**
 * What the router sends here: every POST under /v1/a2a/ the send route does not take. That is
 * an agent name past the router's parameter bound (MAX_PATH_PARAM_CHARS, which is also the
 * bound on a name), refused as an oversized model name is, with a 400 naming `agent` and
 * recorded as the refused A2A call it is; anything else is a 404 left unrecorded, as every other
 * unknown path's is (those have no context to record). Being under /v1/, the caller was
 * authenticated first, so an unknown path here is a 401 without a valid key.
 */
async function notSendable(request: FastifyRequest, ctx: RequestContext): Promise<never> {
  ctx.usage.endpoint = 'a2a';
  checkModelName('agent', sendPathAgent(request.url));
  // Nothing was admitted or held, so there is nothing for the error handler to settle.
  ctx.settled = true;
  throw new GatewayError('not_found', `no route ${request.method} ${pathOf(request.url)}`);
}

export function a2aRoute(
  app: FastifyInstance,
  deps: PipelineDeps,
  hooks: RouteHooks,
  owners: A2aOwnership,
): void {
  app.post<AgentParams>('/v1/a2a/:agent/message/send', async (request, reply) => {
    const ctx = hooks.context(request, reply);
    try {
      const call = readSendCall(request.body);
      const result = await runA2a(deps, ctx, request.params.agent, call, owners);
      replyServedHeaders(reply, ctx, result, result.costUsd);
      return result.response;
    } catch (err) {
      // Protocol errors are answers, not HTTP failures: 200 with the JSON-RPC error object.
      if (!(err instanceof RpcError)) throw err;
      ctx.usage.endpoint = 'a2a';
      ctx.usage.requestedModel = request.params.agent;
      // Recorded as the refusal it is (nothing charged; a hold already taken is released), though HTTP says 200.
      await settle(deps, ctx, {
        status: err.code === RpcCodes.taskNotFound ? 404 : 400,
        errorType: err.code === RpcCodes.taskNotFound ? 'not_found' : 'invalid_request_error',
        costUsd: 0,
      });
      reply.headers(ctx.responseHeaders);
      return err.toBody();
    }
  });
  // The router falls back to this wildcard when the parameter above is too long to match.
  app.post('/v1/a2a/*', async (request, reply) => notSendable(request, hooks.context(request, reply)));
}
