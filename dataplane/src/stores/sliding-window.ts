/**
 * The sliding-window decision, shared by the in-process limiter and mirrored by the Redis Lua
 * script. An entry is one admitted request stamped with its admission time and its tokens; it
 * counts while `at > now - window`.
 */
import type { DimensionDecision, RateDecision, RateLimits, RateTicket } from './rate-limiter.ts';

export interface WindowEntry {
  at: number;
  tokens: number;
}

/** The raw outcome; both store implementations produce exactly this. */
export interface WindowOutcome {
  allowed: boolean;
  /** Requests in the window after the decision. */
  count: number;
  /** Tokens in the window after the decision. */
  tokens: number;
  requestsRetryMs: number;
  tokensRetryMs: number;
  tokensExceedLimit: boolean;
  /** Newest admission time in the window after the decision; undefined when empty. */
  newestAt: number | undefined;
}

export const isLive = (at: number, now: number, windowMs: number): boolean => at > now - windowMs;

const limited = (n: number | undefined): n is number => n !== undefined && n > 0;

/** Normalises a token count: whole, non-negative. */
export const wholeTokens = (n: number): number => (Number.isFinite(n) && n > 0 ? Math.ceil(n) : 0);

/**
 * `entries` from index `from` on are the live entries, oldest first; `tokenSum` their total.
 * Does not mutate; the caller records the new entry when `allowed`.
 */
export function decideWindow(
  entries: readonly WindowEntry[],
  tokenSum: number,
  now: number,
  limits: RateLimits,
  estimate: number,
  windowMs: number,
  from = 0,
): WindowOutcome {
  const count = entries.length - from;
  let requestsRetryMs = 0;
  let tokensRetryMs = 0;
  let tokensExceedLimit = false;
  const rpm = limits.requestsPerMinute;
  const tpm = limits.tokensPerMinute;

  if (limited(rpm) && count + 1 > rpm) {
    // Admission needs count to drop to rpm - 1: wait for the entry at index count - rpm to expire.
    const freeing = entries[from + count - rpm];
    requestsRetryMs = freeing ? freeing.at + windowMs - now : windowMs;
  }
  if (limited(tpm) && tokenSum + estimate > tpm) {
    if (estimate > tpm) {
      tokensExceedLimit = true;
      tokensRetryMs = windowMs;
    } else {
      const need = tokenSum + estimate - tpm;
      let freed = 0;
      tokensRetryMs = windowMs;
      for (let i = from; i < entries.length; i++) {
        const e = entries[i]!;
        freed += e.tokens;
        if (freed >= need) {
          tokensRetryMs = e.at + windowMs - now;
          break;
        }
      }
    }
  }
  const allowed = requestsRetryMs === 0 && tokensRetryMs === 0;
  const newest = count > 0 ? entries[entries.length - 1]?.at : undefined;
  return {
    allowed,
    count: allowed ? count + 1 : count,
    tokens: allowed ? tokenSum + estimate : tokenSum,
    requestsRetryMs,
    tokensRetryMs,
    tokensExceedLimit,
    newestAt: allowed ? Math.max(now, newest ?? now) : newest,
  };
}

function dimension(limit: number, used: number, retryMs: number, resetMs: number): DimensionDecision {
  return {
    allowed: retryMs === 0,
    limit,
    remaining: Math.max(0, limit - used),
    resetMs,
    retryAfterMs: retryMs,
  };
}

/** Turns the raw outcome into the caller's decision (headers' numbers). */
export function toRateDecision(
  outcome: WindowOutcome,
  limits: RateLimits,
  now: number,
  windowMs: number,
  ticket: RateTicket | undefined,
): RateDecision {
  const resetMs = outcome.newestAt === undefined ? 0 : Math.max(0, outcome.newestAt + windowMs - now);
  const rpm = limits.requestsPerMinute;
  const tpm = limits.tokensPerMinute;
  return {
    allowed: outcome.allowed,
    retryAfterMs: outcome.allowed ? 0 : Math.max(outcome.requestsRetryMs, outcome.tokensRetryMs),
    requests: limited(rpm) ? dimension(rpm, outcome.count, outcome.requestsRetryMs, resetMs) : undefined,
    tokens: limited(tpm) ? dimension(tpm, outcome.tokens, outcome.tokensRetryMs, resetMs) : undefined,
    tokensExceedLimit: outcome.tokensExceedLimit,
    ticket: outcome.allowed ? ticket : undefined,
  };
}

/** The decision when a key has no limit at all: nothing is counted or stored. */
export function unlimitedDecision(): RateDecision {
  return {
    allowed: true,
    retryAfterMs: 0,
    requests: undefined,
    tokens: undefined,
    tokensExceedLimit: false,
    ticket: undefined,
  };
}

export const hasLimits = (limits: RateLimits): boolean =>
  limited(limits.requestsPerMinute) || limited(limits.tokensPerMinute);
