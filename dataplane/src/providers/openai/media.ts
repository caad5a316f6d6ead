/**
 * OpenAI's media endpoints (images, audio, videos) for OpenAI, Azure OpenAI and compatible
 * servers. Only translation: the caller's body goes upstream with the deployment's model.
 */
import { encodeMultipart } from '../shared/multipart.ts';
import type {
  MediaAdapter,
  MediaBody,
  MediaOperation,
  RawUpstreamRequest,
  UpstreamTarget,
} from '../types.ts';
import { authHeaders, endpointUrl } from './request.ts';

/** Upstream path of each operation; `{id}` is the video job. */
function operationPath(op: MediaOperation, id: string | undefined): string {
  const job = encodeURIComponent(id ?? '');
  switch (op) {
    case 'videos/remix':
      return `videos/${job}/remix`;
    case 'videos/retrieve':
      return `videos/${job}`;
    case 'videos/content':
      return `videos/${job}/content`;
    default:
      return op;
  }
}

function mediaRequest(
  op: MediaOperation,
  body: MediaBody,
  target: UpstreamTarget,
  id?: string,
): RawUpstreamRequest {
  const url = endpointUrl(target, operationPath(op, id));
  const headers = authHeaders(target);
  if (body.kind === 'none') {
    delete headers['content-type'];
    return { method: 'GET', url, headers, body: undefined };
  }
  if (body.kind === 'json')
    return {
      method: 'POST',
      url,
      headers,
      // A remix takes its model from the source video.
      body: JSON.stringify(op === 'videos/remix' ? body.json : { ...body.json, model: target.upstreamModel }),
    };
  const form = encodeMultipart({ ...body.fields, model: target.upstreamModel }, body.files);
  headers['content-type'] = form.contentType;
  return { method: 'POST', url, headers, body: form.body };
}

export const openaiMediaAdapter: MediaAdapter = { request: mediaRequest };
