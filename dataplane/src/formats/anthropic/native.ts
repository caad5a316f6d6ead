/**
 * Anthropic request fields the canonical chat format has no words for (`output_format`,
 * `output_config`, `mcp_servers`, `service_tier`, `container`, and whatever Anthropic adds
 * next) and the `anthropic-beta` header. They ride on the canonical request under one
 * extension key and reach Anthropic upstreams unchanged; other adapters translate what they
 * can (structured output, effort, service tier) and refuse the rest with a 400 naming the
 * field, never dropping it silently.
 */
import { invalidParam } from '../../errors.ts';
import type { ChatRequest } from '../openai/types.ts';

export const NATIVE_KEY = 'anthropic_native';

/** Fields messagesToChat expresses canonically; every other field is native. */
const TRANSLATED = new Set([
  'model',
  'max_tokens',
  'messages',
  'system',
  'stop_sequences',
  'stream',
  'temperature',
  'top_p',
  'top_k',
  'tools',
  'tool_choice',
  'thinking',
  'metadata',
]);

export interface AnthropicNative {
  /** The client's fields, verbatim. */
  fields: Record<string, unknown>;
  /** The client's `anthropic-beta` header, verbatim. */
  beta?: string;
}

export function nativeOf(req: ChatRequest): AnthropicNative | undefined {
  const v = req[NATIVE_KEY];
  return typeof v === 'object' && v !== null ? (v as AnthropicNative) : undefined;
}

/** The native fields and beta header of a /v1/messages body, or undefined when none were sent. */
export function collectNative(
  body: Record<string, unknown>,
  beta: string | undefined,
): AnthropicNative | undefined {
  const fields: AnthropicNative['fields'] = {};
  for (const [name, value] of Object.entries(body))
    if (!TRANSLATED.has(name) && value !== undefined && value !== null) fields[name] = value;
  if (Object.keys(fields).length === 0 && beta === undefined) return undefined;
  return beta === undefined ? { fields } : { fields, beta };
}

/**
 * The JSON schema of Anthropic structured output (`output_format`, or the newer
 * `output_config.format`), as a canonical response_format any provider understands.
 */
export function structuredOutput(body: Record<string, unknown>): ChatRequest['response_format'] {
  const config = body.output_config;
  const nested =
    typeof config === 'object' && config !== null ? (config as Record<string, unknown>).format : undefined;
  const format = body.output_format ?? nested;
  if (typeof format !== 'object' || format === null) return undefined;
  const f = format as { type?: unknown; schema?: unknown };
  if (f.type !== 'json_schema' || typeof f.schema !== 'object' || f.schema === null) return undefined;
  return { type: 'json_schema', json_schema: { name: 'output', schema: f.schema, strict: true } };
}

/** OpenAI's service tiers for Anthropic's: `auto` is both defaults, `standard_only` = `default`. */
const OPENAI_TIER: Readonly<Record<string, string>> = { auto: 'auto', standard_only: 'default' };

/** `output_config` keys the canonical request carries (effort → reasoning_effort, format → response_format). */
const CANONICAL_OUTPUT_CONFIG = new Set(['effort', 'format']);

/**
 * What a non-Anthropic upstream makes of the native fields: the canonical request without the
 * extension, with the service tier translated for OpenAI-style upstreams. Structured output
 * and effort were made canonical at the edge. Anything else (MCP servers, code-execution
 * containers, newer Anthropic-only options) is a 400 naming the field. The beta header only
 * unlocks such fields, so it needs no translation of its own.
 */
export function foreignRequest(req: ChatRequest, provider: string, openaiStyle: boolean): ChatRequest {
  const native = nativeOf(req);
  if (!native) return req;
  const { [NATIVE_KEY]: _omit, ...rest } = req;
  const refuse = (field: string) =>
    invalidParam(
      field,
      `is an Anthropic feature the ${provider} deployment serving this model cannot honour`,
    );
  for (const [field, value] of Object.entries(native.fields)) {
    if (field === 'output_format') continue;
    if (field === 'output_config') {
      for (const [key, v] of Object.entries(value as Record<string, unknown>))
        if (!CANONICAL_OUTPUT_CONFIG.has(key) && v !== null && v !== undefined)
          throw refuse(`output_config.${key}`);
      continue;
    }
    if (field === 'service_tier') {
      const mapped = typeof value === 'string' ? OPENAI_TIER[value] : undefined;
      if (mapped === undefined) throw invalidParam('service_tier', 'must be "auto" or "standard_only"');
      // Gemini has one tier: both values mean what it always does.
      if (openaiStyle) rest.service_tier = mapped;
      continue;
    }
    throw refuse(field);
  }
  return rest;
}

/** The canonical request with the native fields attached and structured output made canonical. */
export function withNative(
  chat: ChatRequest,
  body: Record<string, unknown>,
  beta: string | undefined,
): ChatRequest {
  const native = collectNative(body, beta);
  if (!native) return chat;
  const format = structuredOutput(body);
  return { ...chat, ...(format && { response_format: format }), [NATIVE_KEY]: native };
}

/** Anthropic itself enforces the schema: no JSON instruction is needed in the prompt. */
export const nativeStructured = (req: ChatRequest): boolean => {
  const f = nativeOf(req)?.fields;
  if (!f) return false;
  const config = f.output_config as { format?: unknown } | undefined;
  return f.output_format !== undefined || (config?.format !== undefined && config.format !== null);
};
