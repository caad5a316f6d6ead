/**
 * The bound on a client-chosen model name. The name is kept wherever a request is accounted
 * (usage records, the request log, rollup cells, Redis analytics indexes, log lines) even when
 * it names no model, so an unbounded one lets a caller park megabytes per request there.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { invalidParam, type GatewayError } from '../errors.ts';
import { RequestHeaders } from '../brand.ts';

/** Longest model (or A2A agent) name taken; real ids, fine-tuned ones included, are under 100. */
export const MAX_MODEL_NAME_CHARS = 256;

/** Body fields and query parameters that name a model. */
const MODEL_FIELDS = ['model', 'embedding_model'] as const;
const MODEL_HEADER = RequestHeaders.model;
/** Enough of the name for the caller to recognise it; the rest is never echoed. */
const SHOWN_CHARS = 32;

/** A client-chosen name for a message: whole when short, else its start and its length. */
export function shownName(value: string): string {
  if (value.length <= SHOWN_CHARS) return value;
  return `${value.slice(0, SHOWN_CHARS)}… (${value.length} characters)`;
}

/** A 400 naming `param` when `value` is a string longer than the bound, else undefined. */
export function modelNameError(param: string, value: unknown): GatewayError | undefined {
  if (typeof value !== 'string' || value.length <= MAX_MODEL_NAME_CHARS) return undefined;
  return invalidParam(
    param,
    `must be at most ${MAX_MODEL_NAME_CHARS} characters; got ${value.length} starting ${JSON.stringify(value.slice(0, SHOWN_CHARS))}`,
  );
}

/** Throws modelNameError's 400, for callers that read a model outside the edge hook. */
export function checkModelName(param: string, value: unknown): void {
  const error = modelNameError(param, value);
  if (error) throw error;
}

/** What the edge sees of a request before its route runs. */
export interface ModelNameSources {
  body: unknown;
  query: unknown;
  headers: IncomingHttpHeaders;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The first oversized model name a request carries in its JSON body, query or model header,
 * as a 400; undefined when there is none. Multipart fields are read by their route (media/upload.ts
 * checks them), the Realtime upgrade by realtime/server.ts. Names in the path are checked by
 * their routes: Gemini's `/v1/models/{model}:generateContent` and GET `/v1/models/{model}` (router
 * wildcards, so any length reaches this 400); `/v1/a2a/{agent}/message/send` is a router
 * parameter, and one over MAX_PATH_PARAM_CHARS (the same 256) falls to that route's wildcard,
 * which answers this 400 naming `agent`.
 */
export function oversizedModelName(req: ModelNameSources): GatewayError | undefined {
  // Runs on every request: no arrays or closures built on the way through.
  const error = fieldsError(req.body) ?? fieldsError(req.query);
  if (error) return error;
  const header = req.headers[MODEL_HEADER];
  if (header === undefined) return undefined;
  if (typeof header === 'string') return modelNameError(MODEL_HEADER, header);
  for (const value of header) {
    const headerError = modelNameError(MODEL_HEADER, value);
    if (headerError) return headerError;
  }
  return undefined;
}

function fieldsError(source: unknown): GatewayError | undefined {
  if (!isRecord(source)) return undefined;
  for (const field of MODEL_FIELDS) {
    const error = modelNameError(field, source[field]);
    if (error) return error;
  }
  return undefined;
}
