/** Shapes shared by the compression stage's pure decisions and its shell. */
import type { ChatMessage } from '../../formats/openai/types.ts';

export type Profile = 'tool-agent' | 'code-agent' | 'chat';

/** SPEC.md's fallback reasons, in the order the pipeline can hit them. */
export type FallbackReason =
  | 'below_threshold'
  | 'no_history'
  | 'insufficient_headroom'
  | 'no_model'
  | 'extraction_failed'
  | 'no_savings';

export type Fallback =
  | { reason: 'below_threshold'; tokens: number; threshold: number }
  | { reason: Exclude<FallbackReason, 'below_threshold'> };

/** `chat`: /v1/chat/completions (turn-based steps); `messages`: /v1/messages (step-based). */
export type StepFormat = 'chat' | 'messages';

/** Indexes into the request's messages, per zone, each in original order. */
export interface Zones {
  system: number[];
  history: number[];
  recent: number[];
  last: number[];
}

/** A message with its token count, counted once per request. */
export interface Measured {
  message: ChatMessage;
  tokens: number;
}
