/**
 * The compression decisions, pure: the threshold gate, zoning and the fallbacks that come
 * before the extraction call; then, with the state in hand, the compressed message list and
 * the savings check.
 */
import type { ChatMessage } from '../../formats/openai/types.ts';
import { profileConversation } from './profile.ts';
import type { Fallback, Measured, Profile, StepFormat, Zones } from './types.ts';
import { zone } from './zones.ts';

/** Recent + Last above this share of the original leave nothing worth compressing. */
export const HEADROOM_SHARE = 0.85;
/** A compression must save at least this share and this many tokens, or it is `no_savings`. */
export const MIN_SAVED_SHARE = 0.1;
export const MIN_SAVED_TOKENS = 256;

export interface PlanInput {
  measured: readonly Measured[];
  /** Tokens of tool definitions (counted in the original, kept as they are). */
  toolTokens: number;
  thresholdTokens: number;
  stepWindow: number;
  format: StepFormat;
  /** Undefined when no extraction model is configured or usable. */
  extractionModel: string | undefined;
}

export type Plan =
  | { kind: 'pass'; fallback: Fallback; originalTokens: number }
  | {
      kind: 'compress';
      originalTokens: number;
      zones: Zones;
      profile: Profile;
      /** Tokens of what stays verbatim: System, Recent, Last and the tool definitions. */
      keptTokens: number;
      extractionModel: string;
    };

const sum = (measured: readonly Measured[], idx: readonly number[]) =>
  idx.reduce((n, i) => n + measured[i]!.tokens, 0);

export function planCompression(input: PlanInput): Plan {
  const { measured } = input;
  const originalTokens = measured.reduce((n, m) => n + m.tokens, 0) + input.toolTokens;
  const pass = (fallback: Fallback): Plan => ({ kind: 'pass', fallback, originalTokens });
  if (originalTokens < input.thresholdTokens)
    return pass({ reason: 'below_threshold', tokens: originalTokens, threshold: input.thresholdTokens });

  const messages = measured.map((m) => m.message);
  const zones = zone(messages, input.stepWindow, input.format);
  if (zones.history.length === 0) return pass({ reason: 'no_history' });
  const recentAndLast = sum(measured, zones.recent) + sum(measured, zones.last);
  if (recentAndLast > HEADROOM_SHARE * originalTokens) return pass({ reason: 'insufficient_headroom' });
  if (input.extractionModel === undefined) return pass({ reason: 'no_model' });

  return {
    kind: 'compress',
    originalTokens,
    zones,
    profile: profileConversation(messages).profile,
    keptTokens: sum(measured, zones.system) + recentAndLast + input.toolTokens,
    extractionModel: input.extractionModel,
  };
}

/** System, then the state (and recovered content), then Recent and Last verbatim. */
export function assemble(
  messages: readonly ChatMessage[],
  zones: Zones,
  inserted: readonly ChatMessage[],
): ChatMessage[] {
  return [
    ...zones.system.map((i) => messages[i]!),
    ...inserted,
    ...zones.recent.map((i) => messages[i]!),
    ...zones.last.map((i) => messages[i]!),
  ];
}

export function worthIt(originalTokens: number, resultTokens: number): boolean {
  const saved = originalTokens - resultTokens;
  return saved >= MIN_SAVED_TOKENS && saved >= MIN_SAVED_SHARE * originalTokens;
}
