/**
 * When the cache is skipped (SPEC.md "Semantic cache rules" 4 and 5). Two separate answers:
 * whether to look up, and whether to store the fresh answer.
 *
 * | condition                                   | lookup | store | reason            |
 * |---------------------------------------------|--------|-------|-------------------|
 * | endpoint other than chat/completions, messages | no  | no    | `endpoint`        |
 * | tenant has the cache disabled                | no     | no    | `tenant-disabled` |
 * | body has `tools` (or legacy `functions`)     | no     | no    | `tools`           |
 * | header `x-gantry-cache: false`               | no     | yes   | `header`          |
 * | body `metadata.cache_bypass: true`           | no     | yes   | `bypass`          |
 *
 * The first matching row wins. `cache_bypass` stores, like the header: it asks for a fresh
 * answer, and that fresh answer is the best one to serve the next similar request.
 */
import { RequestHeaders } from '../../brand.ts';
import type { ChatRequest } from '../../formats/openai/types.ts';
import type { CacheFormat } from './policy.ts';

export type CacheSkipReason = 'endpoint' | 'tenant-disabled' | 'tools' | 'header' | 'bypass';

export interface CacheSkipDecision {
  lookup: boolean;
  store: boolean;
  /** Why something was skipped; undefined when the cache runs fully. */
  reason: CacheSkipReason | undefined;
}

export interface Endpoint {
  method: string;
  /** Request path; a query string and a trailing slash are ignored. */
  path: string;
}

export type HeaderBag = Readonly<Record<string, string | string[] | undefined>>;

const CACHED_ENDPOINTS: Readonly<Record<string, CacheFormat>> = {
  '/v1/chat/completions': 'openai',
  '/v1/messages': 'anthropic',
};

/** The format whose cache an endpoint uses; undefined for every endpoint that is not cached. */
export function cacheFormatOf(endpoint: Endpoint): CacheFormat | undefined {
  // The pipeline asks with a clean route path on every chat request: answered without a split and regex.
  if (endpoint.method === 'POST' && Object.hasOwn(CACHED_ENDPOINTS, endpoint.path))
    return CACHED_ENDPOINTS[endpoint.path];
  if (endpoint.method.toUpperCase() !== 'POST') return undefined;
  const path = endpoint.path.split('?')[0]?.replace(/\/+$/, '') ?? '';
  return Object.hasOwn(CACHED_ENDPOINTS, path) ? CACHED_ENDPOINTS[path] : undefined;
}

/** `x-gantry-cache: false` (any case, surrounding spaces ignored; any of repeated headers). */
export function headerOptsOut(headers: HeaderBag): boolean {
  const raw = headers[RequestHeaders.cache];
  const values = Array.isArray(raw) ? raw : raw === undefined ? [] : [raw];
  return values.some((v) => v.trim().toLowerCase() === 'false');
}

/**
 * `metadata.cache_bypass` set to true. OpenAI's metadata values are strings, so the official
 * SDKs send `"true"`; both spellings count.
 */
export function bodyBypasses(req: Pick<ChatRequest, 'metadata'>): boolean {
  const v = req.metadata?.cache_bypass;
  return v === true || (typeof v === 'string' && v.trim().toLowerCase() === 'true');
}

const hasTools = (req: ChatRequest): boolean => req.tools !== undefined || req.functions !== undefined;

export function skipReason(
  req: ChatRequest,
  headers: HeaderBag,
  tenantCacheEnabled: boolean,
  endpoint: Endpoint,
): CacheSkipDecision {
  const skipBoth = (reason: CacheSkipReason): CacheSkipDecision => ({ lookup: false, store: false, reason });
  if (cacheFormatOf(endpoint) === undefined) return skipBoth('endpoint');
  if (!tenantCacheEnabled) return skipBoth('tenant-disabled');
  if (hasTools(req)) return skipBoth('tools');
  if (headerOptsOut(headers)) return { lookup: false, store: true, reason: 'header' };
  if (bodyBypasses(req)) return { lookup: false, store: true, reason: 'bypass' };
  return { lookup: true, store: true, reason: undefined };
}
