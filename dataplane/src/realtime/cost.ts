/**
 * Money for Realtime responses, pure. A `response.done` reports text and audio tokens apart,
 * and audio costs several times text, so each is priced at its own rate (the deployment's
 * audio prices, else its text prices). The hold before a response prices every input token
 * at the dearer input rate and the output bound at the dearer output rate.
 */
import { MAX_ESTIMATE_USD } from '../accounting/estimate.ts';
import { chargedMicros, heldMicros, microsToUsd } from '../accounting/micros.ts';
import { isTokenCount, MAX_UNBOUNDED_OUTPUT_TOKENS } from '../accounting/reported-usage.ts';
import type { Pricing } from '../config/snapshot.ts';

/** `response.done`'s `response.usage`, as much of it as the upstream sent. */
export interface RealtimeUsage {
  total_tokens?: number;
  input_tokens?: number;
  output_tokens?: number;
  input_token_details?: {
    text_tokens?: number;
    audio_tokens?: number;
    image_tokens?: number;
    cached_tokens?: number;
    cached_tokens_details?: { text_tokens?: number; audio_tokens?: number; image_tokens?: number };
  };
  output_token_details?: { text_tokens?: number; audio_tokens?: number };
}

export interface TokenSplit {
  textIn: number;
  audioIn: number;
  cachedIn: number;
  textOut: number;
  audioOut: number;
}

/** What the gateway knows of a response without the upstream's word, and what bounds it. */
export interface OwnCount {
  /** The input its hold assumed. */
  inputTokens: number;
  /** Output counted from the deltas relayed. */
  producedTokens: number;
  /** The most output the response may bill (`outputBound`). */
  maxOutputTokens: number;
}

/** A detail count (a share of its parent): nonsense is no share. */
const detail = (n: unknown): number => (isTokenCount(n) ? n : 0);

/**
 * Splits a usage report by modality. Tokens a report does not split are text tokens (the
 * cheaper guess is never taken for audio: an unsplit count is charged at least at text).
 * The totals are believed like any provider report (accounting/reported-usage.ts): one that
 * is missing or is no count a response can have (negative, 1e300, a fraction) is replaced by
 * the gateway's own count (1e300 tokens charged $1e294, a missing one made the response
 * free), and output is billed at most the response's output bound.
 */
export function splitUsage(usage: RealtimeUsage | undefined, own: OwnCount): TokenSplit {
  const input = isTokenCount(usage?.input_tokens) ? usage.input_tokens : own.inputTokens;
  const output = Math.min(
    isTokenCount(usage?.output_tokens) ? usage.output_tokens : own.producedTokens,
    Math.max(own.maxOutputTokens, own.producedTokens),
  );
  const inDetails = usage?.input_token_details;
  const audioIn = Math.min(detail(inDetails?.audio_tokens), input);
  const cachedIn = Math.min(detail(inDetails?.cached_tokens), input);
  const audioOut = Math.min(detail(usage?.output_token_details?.audio_tokens), output);
  const cachedAudio = Math.min(detail(inDetails?.cached_tokens_details?.audio_tokens), cachedIn, audioIn);
  return {
    textIn: input - audioIn - (cachedIn - cachedAudio),
    audioIn: audioIn - cachedAudio,
    cachedIn,
    textOut: output - audioOut,
    audioOut,
  };
}

export function realtimeCostUsd(pricing: Pricing | undefined, split: TokenSplit): number {
  if (!pricing) return 0;
  const audioIn = pricing.audioInputPerMillionTokens ?? pricing.inputPerMillionTokens;
  const audioOut = pricing.audioOutputPerMillionTokens ?? pricing.outputPerMillionTokens;
  const cached = pricing.cachedInputPerMillionTokens ?? pricing.inputPerMillionTokens;
  return microsToUsd(
    chargedMicros(
      split.textIn * pricing.inputPerMillionTokens +
        split.audioIn * audioIn +
        split.cachedIn * cached +
        split.textOut * pricing.outputPerMillionTokens +
        split.audioOut * audioOut,
    ),
  );
}

/**
 * The hold for one response: every input token at the dearest of the text, audio and cached
 * input rates, every output token at the dearer output rate, rounded so that no split of those
 * tokens is charged more (micros.ts).
 */
export function responseEstimateUsd(
  pricing: Pricing | undefined,
  inputTokens: number,
  maxOutputTokens: number,
): number {
  if (!pricing) return 0;
  const inRate = Math.max(
    pricing.inputPerMillionTokens,
    pricing.audioInputPerMillionTokens ?? 0,
    pricing.cachedInputPerMillionTokens ?? 0,
  );
  const outRate = Math.max(pricing.outputPerMillionTokens, pricing.audioOutputPerMillionTokens ?? 0);
  return Math.min(
    microsToUsd(heldMicros(inputTokens * inRate + maxOutputTokens * outRate)),
    MAX_ESTIMATE_USD,
  );
}

/** PCM16 at 24 kHz is 48,000 bytes a second, and a second of audio is about 10 tokens. */
export const AUDIO_BYTES_PER_TOKEN = 4_800;
/** The output a hold assumes when neither the response nor the session sets `max_output_tokens` ("inf"). */
export const DEFAULT_MAX_OUTPUT_TOKENS = 4_096;

/** The first `max_output_tokens` the protocol allows: a whole number, or undefined for "inf" or none. */
function setBound(candidates: readonly unknown[]): number | undefined {
  for (const c of candidates)
    if (typeof c === 'number' && Number.isFinite(c) && c > 0) return Math.floor(c);
    else if (c === 'inf') return undefined;
  return undefined;
}

/** A response's output bound, read once for its hold and for its bill. */
export interface OutputLimits {
  /** The output its hold is priced on: the bound, or the default when unbounded. */
  held: number;
  /**
   * The most output it is billed for: the bound, or when it has none ("inf", the protocol's
   * default) the ceiling of any unbounded answer. The hold's default cut a reported 6,000
   * audio tokens of an "inf" response to 4,096.
   */
  billed: number;
}

/** `candidates`: the `max_output_tokens` that may apply, the response's before the session's. */
export function outputLimits(candidates: readonly unknown[]): OutputLimits {
  const bound = setBound(candidates);
  return { held: bound ?? DEFAULT_MAX_OUTPUT_TOKENS, billed: bound ?? MAX_UNBOUNDED_OUTPUT_TOKENS };
}
