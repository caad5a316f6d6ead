/**
 * OpenAI's video jobs on the fake provider, stateless: a job's id encodes its model, seconds
 * and size, so every later call answers from the id alone. A created job is `queued`; read
 * back it is `completed`, and its content is a small deterministic MP4-looking body.
 */
import { asString } from './behaviour.ts';
import { openaiErrors } from './openai-errors.ts';
import { openaiError } from './openai-errors.ts';
import type { Outcome, Route, RouteContext } from './types.ts';

interface JobFacts {
  model: string;
  seconds: string;
  size: string;
  remixOf?: string;
}

/** Bytes of fake video per second. */
export const FAKE_VIDEO_BYTES_PER_SECOND = 1_000;

const encodeId = (facts: JobFacts): string =>
  `video_${Buffer.from(JSON.stringify(facts)).toString('base64url')}`;

function decodeId(id: string): JobFacts | undefined {
  if (!id.startsWith('video_')) return undefined;
  try {
    const facts = JSON.parse(
      Buffer.from(id.slice('video_'.length), 'base64url').toString('utf8'),
    ) as JobFacts;
    return typeof facts.model === 'string' ? facts : undefined;
  } catch {
    return undefined;
  }
}

function record(id: string, facts: JobFacts, status: 'queued' | 'completed'): Record<string, unknown> {
  return {
    id,
    object: 'video',
    status,
    created_at: 1_700_000_000,
    model: facts.model,
    seconds: facts.seconds,
    size: facts.size,
    progress: status === 'completed' ? 100 : 0,
    remixed_from_video_id: facts.remixOf ?? null,
  };
}

const bearer = (ctx: Omit<RouteContext, 'body'>): boolean =>
  /^Bearer\s+\S+/i.test(String(ctx.headers.authorization ?? ''));

const notFound = (id: string): Outcome => ({
  kind: 'json',
  body: { error: { message: `Video ${id} not found`, type: 'invalid_request_error' } },
});

function route(
  answer: (ctx: RouteContext) => Outcome,
  bodyless: boolean,
  validate?: Route['validate'],
): Route {
  return {
    errors: openaiErrors,
    bodyless,
    authorized: bearer,
    validate,
    describe: (ctx) => ({ model: asString(ctx.body.model), stream: false }),
    answer,
  };
}

export function videoRoute(method: string, pathname: string): Route | undefined {
  const m = /\/videos(?:\/([^/]+))?(\/remix|\/content)?$/.exec(pathname);
  if (!m) return undefined;
  const id = m[1] === undefined ? undefined : decodeURIComponent(m[1]);
  const facts = id === undefined ? undefined : decodeId(id);
  const missing = id !== undefined && !facts;
  const unknown: Route['validate'] = () =>
    missing ? openaiError(404, `Video ${id} not found`, 'invalid_request_error') : undefined;
  if (method === 'POST' && id === undefined)
    return route(
      (ctx) => {
        const f = {
          model: asString(ctx.body.model) ?? '',
          seconds: String(ctx.body.seconds ?? '4'),
          size: asString(ctx.body.size) ?? '720x1280',
        };
        return { kind: 'json', body: record(encodeId(f), f, 'queued') };
      },
      false,
      (ctx) =>
        typeof ctx.body.prompt === 'string'
          ? undefined
          : openaiError(400, "'prompt' is a required property", 'invalid_request_error', null, 'prompt'),
    );
  if (method === 'POST' && m[2] === '/remix' && id !== undefined)
    return route(
      () => {
        if (!facts) return notFound(id);
        const f = { ...facts, remixOf: id };
        return { kind: 'json', body: record(encodeId(f), f, 'queued') };
      },
      false,
      unknown,
    );
  if (method === 'GET' && id !== undefined && m[2] === undefined)
    return route(
      () => (facts ? { kind: 'json', body: record(id, facts, 'completed') } : notFound(id)),
      true,
      unknown,
    );
  if (method === 'GET' && id !== undefined && m[2] === '/content')
    return route(
      () => {
        const body = Buffer.alloc(Math.max(12, Number(facts?.seconds ?? 1) * FAKE_VIDEO_BYTES_PER_SECOND));
        body.write('\0\0\0\x18ftypmp42', 0, 'latin1');
        return { kind: 'raw', contentType: 'video/mp4', body };
      },
      true,
      unknown,
    );
  return undefined;
}
