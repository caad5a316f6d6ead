/**
 * Whether an event past the SSE bound (`oversized`) can be the request's doing, and if so what
 * of it. A caller can ask for one: `echo` (a legacy completion's echoed prompt with its
 * logprobs, ~600 bytes a token on vLLM), image output (base64 in one event), or a body so large
 * that an echo of it nears the bound. Then it is not held against the deployment and not
 * failed over, since every deployment would send it. Otherwise no request makes a 16 MiB line,
 * and a deployment that sends one is broken: it counts as its fault and is failed over, or a
 * deployment that only ever sends such lines would keep its model down.
 */
import type { ChatRequest, CompletionRequest } from '../formats/openai/types.ts';

/** A request body at least this large may be echoed past the 16 MiB bound. */
export const OVERSIZED_BODY_BYTES = 8 * 1024 * 1024;

/**
 * The chat path (chat, Responses, Messages, generateContent, all as a canonical chat request):
 * `body` is what was sent upstream. Undefined when nothing in the request explains the event.
 */
export function chatOversizedCause(req: ChatRequest, body: string | undefined): string | undefined {
  if (body !== undefined && atLeastBytes(body, OVERSIZED_BODY_BYTES))
    return `body of ${(Buffer.byteLength(body) / (1024 * 1024)).toFixed(1)} MiB`;
  if (req.echo !== undefined && req.echo !== null && req.echo !== false) return 'echo';
  if (asksForImages(req)) return 'image output';
  return undefined;
}

/**
 * Legacy completions: only `echo` makes such an event (the prompt, with its logprobs). Any
 * value but absent, null or false counts: the body is forwarded as sent, and vLLM's lax
 * parsing reads `1`, "true" or "yes" as true.
 */
export function legacyOversizedCause(req: CompletionRequest): string | undefined {
  return req.echo !== undefined && req.echo !== null && req.echo !== false ? 'echo of the prompt' : undefined;
}

/** Whether the UTF-8 bytes of `s` reach `n`, counted only when its length cannot tell. */
function atLeastBytes(s: string, n: number): boolean {
  if (s.length >= n) return true;
  // A UTF-16 code unit is at most 3 bytes.
  if (s.length * 3 < n) return false;
  return Buffer.byteLength(s) >= n;
}

/**
 * Image output as the OpenAI-compatible APIs ask for it: `modalities` naming image (OpenRouter,
 * Gemini's OpenAI endpoint), an `image_generation` tool (Responses), Gemini's
 * `generationConfig.responseModalities` passed through.
 */
function asksForImages(req: ChatRequest): boolean {
  if (namesImage(req.modalities)) return true;
  // Typed as function tools, but a Responses tool passes through as it was sent.
  const tools: unknown = req.tools;
  if (Array.isArray(tools) && tools.some((t) => isRecord(t) && t.type === 'image_generation')) return true;
  const config = req.generationConfig ?? req.generation_config;
  return isRecord(config) && namesImage(config.responseModalities ?? config.response_modalities);
}

const namesImage = (v: unknown): boolean =>
  Array.isArray(v) && v.some((m) => typeof m === 'string' && m.toLowerCase() === 'image');

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;
