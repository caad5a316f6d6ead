/**
 * OpenAI's media routes on the fake provider: images (generations JSON, edits and
 * variations multipart). Answers are deterministic functions of the request.
 */
import { createHash } from 'node:crypto';
import { asString } from './behaviour.ts';
import { isFileInfo } from './multipart.ts';
import { openaiError } from './openai-errors.ts';
import type { ErrorReply, Outcome, RouteContext } from './types.ts';

export type MediaEndpoint = 'images/generations' | 'images/edits' | 'images/variations';

/** A valid 1×1 transparent PNG: what every b64_json image decodes to. */
export const FAKE_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

const digest = (s: string): string => createHash('sha256').update(s).digest('hex').slice(0, 16);

export function mediaEndpointOf(pathname: string): MediaEndpoint | undefined {
  for (const e of ['images/generations', 'images/edits', 'images/variations'] as const)
    if (pathname.endsWith(`/${e}`)) return e;
  return undefined;
}

const invalid = (param: string, message: string): ErrorReply =>
  openaiError(400, message, 'invalid_request_error', null, param);

export function validateMedia(
  endpoint: MediaEndpoint,
  body: Record<string, unknown>,
  needModel: boolean,
): ErrorReply | undefined {
  if (needModel && typeof body.model !== 'string')
    return invalid('model', 'you must provide a model parameter');
  if (endpoint !== 'images/variations' && typeof body.prompt !== 'string')
    return invalid('prompt', "'prompt' is a required property");
  if (endpoint !== 'images/generations' && !isFileInfo(body.image))
    return invalid('image', "'image' is a required file");
  const n = body.n === undefined ? 1 : Number(body.n);
  if (!Number.isInteger(n) || n < 1 || n > 10) return invalid('n', "'n' must be between 1 and 10");
  return undefined;
}

/**
 * `n` images; `response_format: b64_json` gives FAKE_PNG, otherwise (the default, `url`) a
 * URL derived from the endpoint, model, prompt and index.
 */
export function answerMedia(endpoint: MediaEndpoint, ctx: RouteContext, model: string): Outcome {
  const body = ctx.body;
  const n = body.n === undefined ? 1 : Number(body.n);
  const prompt = asString(body.prompt) ?? '';
  const b64 = body.response_format === 'b64_json';
  const data = Array.from({ length: n }, (_, i) =>
    b64
      ? { b64_json: FAKE_PNG.toString('base64') }
      : { url: `https://fake-provider.invalid/${endpoint}/${digest(`${model}\n${prompt}\n${i}`)}.png` },
  );
  return { kind: 'json', body: { created: 1_700_000_000, data } };
}
