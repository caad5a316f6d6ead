/**
 * Per-key rate limits on two dimensions, requests and tokens per minute, decided together in
 * one atomic step. The window is sliding and exact: in any 60 s span a key is admitted at most
 * `requestsPerMinute` requests, and at most `tokensPerMinute` tokens as counted at admission
 * plus later corrections.
 */
import type { KeyRef } from './types.ts';

export const RATE_WINDOW_MS = 60_000;

/** A missing dimension is not limited. */
export interface RateLimits {
  requestsPerMinute?: number | undefined;
  tokensPerMinute?: number | undefined;
}

/** One dimension's verdict, in the terms of the `x-ratelimit-*` headers. */
export interface DimensionDecision {
  allowed: boolean;
  limit: number;
  /** What is left in the window after this request (never negative). */
  remaining: number;
  /** Until the window is empty again, i.e. the limit has fully reset (`x-ratelimit-reset-*`). */
  resetMs: number;
  /** When refused: until this dimension would admit the same request. 0 when allowed. */
  retryAfterMs: number;
}

export interface RateTicket extends KeyRef {
  readonly id: string;
  /** Tokens counted for the request so far (the estimate until adjusted). */
  readonly tokens: number;
}

export interface RateDecision {
  allowed: boolean;
  /** Max of the refusing dimensions' waits; 0 when allowed (`Retry-After`). */
  retryAfterMs: number;
  /** Undefined when that dimension has no limit. */
  requests: DimensionDecision | undefined;
  tokens: DimensionDecision | undefined;
  /**
   * The token estimate alone is above `tokensPerMinute`: no wait will help (OpenAI answers
   * such requests with 429 too). `retryAfterMs` is then a full window.
   */
  tokensExceedLimit: boolean;
  /** Present when allowed: hand it to `adjust` once the actual token count is known. */
  ticket: RateTicket | undefined;
}

export interface RateLimiter {
  /**
   * Counts one request with `tokenEstimate` tokens if both dimensions have room, else counts
   * nothing. With no limit at all, admits without touching the store.
   */
  acquire(key: KeyRef, limits: RateLimits, tokenEstimate: number): Promise<RateDecision>;
  /**
   * Replaces the admitted estimate with the actual token count (either direction). Once per
   * ticket; a no-op when the request has already left the window.
   */
  adjust(ticket: RateTicket, actualTokens: number): Promise<void>;
}
