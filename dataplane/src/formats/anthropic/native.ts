/**
 * Anthropic request fields the canonical chat format has no words for (`output_format`,
 * `output_config`, `mcp_servers`, `service_tier`, `container`) and the `anthropic-beta`
 * header. They ride on the canonical request under one extension key and reach Anthropic
 * upstreams unchanged; other adapters translate what they can (structured output, service
 * tier) and refuse the rest with a 400 naming the field, never dropping it silently.
 */
import { invalidParam } from '../../errors.ts';
import type { ChatRequest } from '../openai/types.ts';

export const NATIVE_KEY = 'anthropic_native';

export const NATIVE_FIELDS = [
  'output_format',
  'output_config',
  'mcp_servers',
  'service_tier',
  'container',
] as const;

export interface AnthropicNative {
  /** The client's fields, verbatim. */
  fields: Partial<Record<(typeof NATIVE_FIELDS)[number], unknown>>;
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
  for (const name of NATIVE_FIELDS)
    if (body[name] !== undefined && body[name] !== null) fields[name] = body[name];
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

/**
 * What a non-Anthropic upstream makes of the native fields: the canonical request without the
 * extension, with the service tier translated for OpenAI-style upstreams. Structured output
 * was already made canonical at the edge; `output_config.effort` became reasoning_effort.
 * MCP servers and code-execution containers are Anthropic-run features: a 400.
 */
export function foreignRequest(req: ChatRequest, provider: string, openaiStyle: boolean): ChatRequest {
  const native = nativeOf(req);
  if (!native) return req;
  const { [NATIVE_KEY]: _omit, ...rest } = req;
  for (const field of ['mcp_servers', 'container'] as const)
    if (native.fields[field] !== undefined)
      throw invalidParam(field, `is served by Anthropic only; this model's deployment is ${provider}`);
  const tier = native.fields.service_tier;
  if (tier !== undefined) {
    const mapped = typeof tier === 'string' ? OPENAI_TIER[tier] : undefined;
    if (mapped === undefined) throw invalidParam('service_tier', `must be "auto" or "standard_only"`);
    // Gemini has one tier: both values mean what it always does.
    if (openaiStyle) rest.service_tier = mapped;
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
