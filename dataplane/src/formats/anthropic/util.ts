/** Small helpers both Anthropic translation directions share. */
import { MAX_JSON_DEPTH_CEILING, textExceedsDepth } from '../json-depth.ts';
import type { AnthropicCacheControl } from './types.ts';

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * OpenAI carries tool arguments as a JSON string, Anthropic as an object. Anthropic rejects a
 * tool_use whose input is not an object, so anything else (empty, truncated, an array)
 * becomes `{}`: the call stays in the history, only its unusable arguments are lost.
 */
export function toolInput(args: string | undefined): Record<string, unknown> {
  if (args === undefined || args.trim() === '') return {};
  // Deeper than any request may nest (the edge holds requests to less): unusable as well.
  if (textExceedsDepth(args, MAX_JSON_DEPTH_CEILING)) return {};
  try {
    const parsed: unknown = JSON.parse(args);
    return isRecord(parsed) ? parsed : {};
  } catch {
    return {};
  }
}

/** Anthropic's only cache marker is `{type: 'ephemeral', ttl?}`; anything else is ignored. */
export function cacheControlOf(holder: unknown): AnthropicCacheControl | undefined {
  if (!isRecord(holder)) return undefined;
  const cc = holder['cache_control'];
  if (!isRecord(cc) || cc['type'] !== 'ephemeral') return undefined;
  return typeof cc['ttl'] === 'string' ? { type: 'ephemeral', ttl: cc['ttl'] } : { type: 'ephemeral' };
}

/** Spread helper: `{...withCacheControl(x)}` adds the key only when there is a marker. */
export function withCacheControl(holder: unknown): { cache_control?: AnthropicCacheControl } {
  const cc = cacheControlOf(holder);
  return cc === undefined ? {} : { cache_control: cc };
}
