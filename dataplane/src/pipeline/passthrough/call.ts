/**
 * One attempt of an OpenAI-style JSON operation Gantry does not translate (moderations,
 * rerank, fine-tuning jobs) against one deployment: the body goes through as the caller
 * sent it, with the deployment's upstream model and credentials. Only providers that speak
 * OpenAI's wire format can serve these; the router never picks another (capabilities), and
 * a deployment misconfigured that way fails as a bad request rather than a malformed call.
 */
import { authHeaders } from '../../providers/openai/request.ts';
import type { UpstreamRequest, UpstreamTarget } from '../../providers/types.ts';
import { readJsonObject, sendOk, type CallContext } from '../../router/calls.ts';
import { UpstreamFailure } from '../../router/upstream.ts';

const OPENAI_WIRE = new Set(['openai', 'openai-compatible', 'azure-openai']);

/** `operation` is a path under the deployment's base URL, e.g. `moderations` or `fine_tuning/jobs/x/cancel`. */
export function passthroughRequest(
  target: UpstreamTarget,
  method: 'GET' | 'POST',
  operation: string,
  body: Record<string, unknown> | undefined,
  replaceModel = true,
): UpstreamRequest {
  const url =
    target.provider === 'azure-openai'
      ? `${target.baseUrl}/openai/${operation}${operation.includes('?') ? '&' : '?'}api-version=${encodeURIComponent(target.apiVersion ?? '2024-10-21')}`
      : `${target.baseUrl}/${operation}`;
  const payload = body && replaceModel ? { ...body, model: target.upstreamModel } : body;
  return {
    method,
    url,
    headers: authHeaders(target),
    body: payload === undefined ? undefined : JSON.stringify(payload),
  };
}

export async function passthroughCall(
  ctx: CallContext,
  method: 'GET' | 'POST',
  operation: string,
  body: Record<string, unknown> | undefined,
  replaceModel = true,
): Promise<Record<string, unknown>> {
  const target = ctx.deployment.target;
  if (!OPENAI_WIRE.has(target.provider))
    throw new UpstreamFailure({
      kind: 'bad_request',
      status: 0,
      message: `deployment ${ctx.deployment.name} (${target.provider}) does not speak the OpenAI /${operation.split('/')[0]} API`,
    });
  const res = await sendOk(ctx, passthroughRequest(target, method, operation, body, replaceModel), false);
  return readJsonObject(ctx, res);
}
