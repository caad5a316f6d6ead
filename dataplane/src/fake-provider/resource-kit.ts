/**
 * Helpers shared by the fake's stored-object APIs (files, batches, vector stores, assistants,
 * containers): OpenAI's cursor lists, its 404 and 400 bodies, and a tiny per-route table.
 */
import { openaiError, openaiErrors } from './openai-errors.ts';
import type { ErrorReply, Outcome, Route, RouteContext } from './types.ts';

export type Obj = Record<string, unknown>;

export const json = (body: unknown): Outcome => ({ kind: 'json', body });

export const missing = (what: string, id: string): ErrorReply =>
  what === 'file'
    ? // OpenAI's own words for a file it does not hold, blaming the path's id.
      openaiError(404, `No such File object: ${id}`, 'invalid_request_error', null, 'id')
    : openaiError(404, `No ${what} found with id '${id}'.`, 'invalid_request_error', null, null);

export const badParam = (param: string, message: string): ErrorReply =>
  openaiError(400, message, 'invalid_request_error', null, param);

/** OpenAI's cursor page: `limit` (default 20), `after`, `order` (default desc, newest first). */
export function cursorList(items: readonly Obj[], url: URL): Outcome {
  const limit = Math.max(1, Math.min(10_000, Number(url.searchParams.get('limit') ?? 20) || 20));
  let all = url.searchParams.get('order') === 'asc' ? [...items] : [...items].reverse();
  const after = url.searchParams.get('after');
  if (after) all = all.slice(all.findIndex((o) => o.id === after) + 1);
  const data = all.slice(0, limit);
  return json({
    object: 'list',
    data,
    first_id: data[0]?.id ?? null,
    last_id: data.at(-1)?.id ?? null,
    has_more: all.length > limit,
  });
}

/** One operation of a stored-object API: checks (the real API's 4xx) then the answer. */
export interface Operation {
  check?(ctx: RouteContext): ErrorReply | undefined;
  run(ctx: RouteContext): Outcome;
}

const bearer = (ctx: Omit<RouteContext, 'body'>): boolean =>
  /^Bearer\s+\S+/i.test(String(ctx.headers.authorization ?? ''));

export function operationRoute(method: string, op: Operation): Route {
  return {
    errors: openaiErrors,
    // Reads, deletes and bodiless actions (a batch cancel) take no body.
    bodyless: method !== 'POST',
    authorized: bearer,
    validate: (ctx) => op.check?.(ctx),
    describe: (ctx) => ({
      model: typeof ctx.body.model === 'string' ? ctx.body.model : undefined,
      stream: false,
    }),
    answer: (ctx) => op.run(ctx),
  };
}

/** `…/<collection>[/<id>[/<sub>[/<subId>[/<tail>]]]]` at the end of any prefix. */
export function matchPath(
  pathname: string,
  collection: string,
): { id?: string; sub?: string; subId?: string; tail?: string } | undefined {
  const m = new RegExp(`/${collection}(?:/([^/]+)(?:/([^/]+)(?:/([^/]+)(?:/([^/]+))?)?)?)?$`).exec(pathname);
  if (!m) return undefined;
  const d = (s: string | undefined) => (s === undefined ? undefined : decodeURIComponent(s));
  return { id: d(m[1]), sub: m[2], subId: d(m[3]), tail: m[4] };
}
