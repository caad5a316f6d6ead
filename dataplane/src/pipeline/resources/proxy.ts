/**
 * One call to the deployment that holds (or will hold) an object: OpenAI's path for the
 * family under the deployment's base URL, the caller's body as it came (JSON or multipart),
 * the deployment's credentials. Only OpenAI-wire providers keep these objects.
 */
import { authHeaders } from '../../providers/openai/request.ts';
import { encodeMultipart } from '../../providers/shared/multipart.ts';
import type { MediaFile, RawUpstreamRequest, UpstreamTarget } from '../../providers/types.ts';
import { sendOk, type CallContext } from '../../router/calls.ts';
import { UpstreamFailure, type UpstreamResponse } from '../../router/upstream.ts';

export type HttpMethod = 'GET' | 'POST' | 'DELETE';

export type ResourceBody =
  | { kind: 'none' }
  | { kind: 'json'; json: Record<string, unknown> }
  | { kind: 'multipart'; fields: Record<string, string>; files: MediaFile[] };

const OPENAI_WIRE = new Set(['openai', 'openai-compatible', 'azure-openai']);
const AZURE_DEFAULT_API_VERSION = '2024-10-21';

/** Azure keeps these objects per resource (`/openai/files`), not per model deployment. */
export function resourceUrl(target: UpstreamTarget, operation: string): string {
  if (target.provider !== 'azure-openai') return `${target.baseUrl}/${operation}`;
  const version = encodeURIComponent(target.apiVersion ?? AZURE_DEFAULT_API_VERSION);
  return `${target.baseUrl}/openai/${operation}${operation.includes('?') ? '&' : '?'}api-version=${version}`;
}

export function resourceRequest(
  target: UpstreamTarget,
  method: HttpMethod,
  operation: string,
  body: ResourceBody,
  extraHeaders: Readonly<Record<string, string>> = {},
): RawUpstreamRequest {
  const headers = { ...authHeaders(target), ...extraHeaders };
  const url = resourceUrl(target, operation);
  if (body.kind === 'none') {
    delete headers['content-type'];
    return { method, url, headers, body: undefined };
  }
  if (body.kind === 'json') return { method, url, headers, body: JSON.stringify(body.json) };
  const form = encodeMultipart(body.fields, body.files);
  headers['content-type'] = form.contentType;
  return { method, url, headers, body: form.body };
}

/** Send; a non-2xx answer is an UpstreamFailure, as for every other upstream call. */
export function sendResource(
  call: CallContext,
  method: HttpMethod,
  operation: string,
  body: ResourceBody,
  extraHeaders?: Readonly<Record<string, string>>,
  stream = false,
): Promise<UpstreamResponse> {
  const target = call.deployment.target;
  if (!OPENAI_WIRE.has(target.provider))
    throw new UpstreamFailure({
      kind: 'bad_request',
      status: 0,
      message: `deployment ${call.deployment.name} (${target.provider}) does not speak the OpenAI /${operation.split('/')[0]} API`,
    });
  return sendOk(call, resourceRequest(target, method, operation, body, extraHeaders), stream);
}
