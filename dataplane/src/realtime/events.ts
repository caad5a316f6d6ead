/** The few facts of Realtime events the proxy acts on, read defensively from untrusted JSON. */
import { randomBytes } from 'node:crypto';
import type { GatewayError } from '../errors.ts';
import { AUDIO_BYTES_PER_TOKEN } from './cost.ts';

export interface RealtimeEvent {
  type: string;
  event_id?: unknown;
  [field: string]: unknown;
}

export const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

export function parseEvent(text: string): RealtimeEvent | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  return isRecord(v) && typeof v.type === 'string' ? (v as RealtimeEvent) : undefined;
}

export const eventId = (): string => `event_gty_${randomBytes(12).toString('hex')}`;

/** An `error` event in OpenAI's framing carrying SPEC.md's error fields, tied to the client's event. */
export function errorEvent(error: GatewayError, clientEventId?: unknown): string {
  return JSON.stringify({
    type: 'error',
    event_id: eventId(),
    error: {
      ...error.toBody().error,
      event_id: typeof clientEventId === 'string' ? clientEventId : null,
    },
  });
}

/** Tokens of base64 audio: decoded bytes at PCM16 24 kHz, about 10 tokens a second. */
export function audioTokens(base64: unknown): number {
  if (typeof base64 !== 'string') return 0;
  return Math.ceil((base64.length * 3) / 4 / AUDIO_BYTES_PER_TOKEN);
}

/** The audio tokens of an item's audio parts (`itemTokens` counts them among the rest). */
export function itemAudioTokens(item: unknown): number {
  if (!isRecord(item) || !Array.isArray(item.content)) return 0;
  let tokens = 0;
  for (const part of item.content) if (isRecord(part)) tokens += audioTokens(part.audio);
  return tokens;
}

/** Text is counted at 4 characters a token; audio parts by their bytes; anything else by its JSON. */
export function itemTokens(item: unknown): number {
  if (!isRecord(item)) return 0;
  const content = Array.isArray(item.content) ? item.content : [];
  let tokens = 0;
  for (const part of content) {
    if (!isRecord(part)) continue;
    if (typeof part.audio === 'string') tokens += audioTokens(part.audio);
    else tokens += Math.ceil(JSON.stringify(part).length / 4);
  }
  const rest = { ...item, content: undefined };
  return tokens + Math.ceil(JSON.stringify(rest).length / 4);
}

/**
 * The gateway's own count of a response's output, from the deltas it relays: text and tool-call
 * arguments at 4 characters a token, audio by its bytes. Audio transcripts are not counted: they
 * shadow audio already counted. This count bounds a response cut short and is the least a
 * `response.done` bills, so every output the upstream bills must be in it (a function call's
 * arguments were not, and a 16,000-character call counted 0). Audio apart from text: a response
 * cut short is priced at each one's rate (audio output was priced as text, 4x less).
 */
export function deltaTokens(event: RealtimeEvent): { text: number; audio: number } {
  switch (event.type) {
    case 'response.output_text.delta':
    case 'response.text.delta':
    case 'response.function_call_arguments.delta':
    case 'response.mcp_call_arguments.delta':
      return { text: typeof event.delta === 'string' ? Math.ceil(event.delta.length / 4) : 0, audio: 0 };
    case 'response.output_audio.delta':
    case 'response.audio.delta':
      return { text: 0, audio: audioTokens(event.delta) };
    default:
      return { text: 0, audio: 0 };
  }
}
