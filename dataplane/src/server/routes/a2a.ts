/** `POST /v1/a2a/{agent}/message/send`: an A2A JSON-RPC call proxied to a configured agent. */
import type { FastifyInstance } from 'fastify';
import { readSendCall, RpcCodes, RpcError } from '../../pipeline/a2a/jsonrpc.ts';
import type { A2aOwnership } from '../../pipeline/a2a/owners.ts';
import { runA2a } from '../../pipeline/a2a/run.ts';
import type { PipelineDeps } from '../../pipeline/forward.ts';
import { settle } from '../../pipeline/settlement.ts';
import { replyServedHeaders } from './headers.ts';
import type { RouteHooks } from './hooks.ts';

interface AgentParams {
  Params: { agent: string };
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
}
