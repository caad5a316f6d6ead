import { MAX_JSON_DEPTH_CEILING, textExceedsDepth } from '../../formats/json-depth.ts';

/** Parse `retry-after` (seconds or HTTP date) and `retry-after-ms` into milliseconds. */
export function retryAfterMs(
  headers: Record<string, string | string[] | undefined>,
  now: number = Date.now(),
): number | undefined {
  // Number('') is 0: a blank header must read as absent, not as "retry at once".
  const ms = first(headers['retry-after-ms'])?.trim();
  if (ms) {
    const n = Number(ms);
    if (Number.isFinite(n) && n >= 0) return n;
  }
  const value = first(headers['retry-after'])?.trim();
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : undefined;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

const first = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);

/**
 * JSON.parse that returns undefined instead of throwing: upstream bodies and JSON carried in
 * text fields (tool arguments, tool results) are untrusted. Text nested deeper than any request
 * may be is treated as not JSON, so what it parses to is always safe to serialise again.
 */
export function tryParseJson(text: string): unknown {
  if (textExceedsDepth(text, MAX_JSON_DEPTH_CEILING)) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

export const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
