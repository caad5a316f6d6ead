/**
 * The rule for guardrail scanning in Realtime sessions, as pure functions: how much text a key's
 * sessions may have scanned per window on a pod, how much of it one holder may take, whether an
 * event fits, and what a refusal says. A holder is one session opened with the API key, or all
 * the sessions of one client secret together (one end user). The key total bounds the pod's CPU;
 * the share stops one holder from taking the whole of it and starving the key's other users.
 */
import { GatewayError } from '../errors.ts';
import type { RealtimeLimits } from './limits.ts';

export interface ScanAllowance {
  /** Characters all of a key's sessions on this pod may have scanned per window. */
  keyChars: number;
  /** Characters one holder may have scanned per window; never more than `keyChars`. */
  shareChars: number;
}

/**
 * The key's total split evenly between the most sessions it may hold, so that holders that each
 * keep to their share never exhaust it; but never below the floor a normal conversation needs
 * (a pod allowing many sessions per key would otherwise cut each to a few KiB), nor above the total.
 */
export function scanAllowance(
  limits: Pick<
    RealtimeLimits,
    'maxScannedCharsPerMinute' | 'maxSessionsPerKey' | 'minScannedCharsPerSession'
  >,
): ScanAllowance {
  const keyChars = limits.maxScannedCharsPerMinute;
  const even = Math.floor(keyChars / Math.max(1, limits.maxSessionsPerKey));
  return { keyChars, shareChars: Math.min(keyChars, Math.max(even, limits.minScannedCharsPerSession)) };
}

/**
 * `ok`: scan it. `never`: bigger than a share, it would be refused in any window. `share`: the
 * holder has used its share this window. `key`: the holder is within its share but the key's
 * total is spent (by its other holders): not this client's doing.
 */
export type ScanVerdict = 'ok' | 'never' | 'share' | 'key';

export interface ScanUse {
  keyUsed: number;
  holderUsed: number;
}

export function judgeScan(allowance: ScanAllowance, use: ScanUse, chars: number): ScanVerdict {
  if (chars > allowance.shareChars) return 'never';
  if (use.holderUsed + chars > allowance.shareChars) return 'share';
  if (use.keyUsed + chars > allowance.keyChars) return 'key';
  return 'ok';
}

/** Whether a refusal is the client's own doing, and so counts toward closing it (client-flow.ts). */
export const countsAgainstClient = (verdict: ScanVerdict): boolean =>
  verdict === 'never' || verdict === 'share';

export interface ScanRefusal {
  verdict: Exclude<ScanVerdict, 'ok'>;
  chars: number;
  holderUsed: number;
  shareChars: number;
  retryAfterS: number;
  /** Who the share belongs to, as the message names it: "this session", "this client secret's sessions". */
  holder: string;
}

/**
 * The error event for a refused event. It speaks of the holder's own share only: the key's other
 * users and their traffic are not this client's business (a browser user's secret spends the key
 * of the backend that minted it).
 */
export function scanRefusalError(r: ScanRefusal): GatewayError {
  const text = 'characters of text for the guardrails to scan';
  switch (r.verdict) {
    case 'never':
      return new GatewayError(
        'request_too_large',
        `this event carries ${r.chars} ${text}, more than the share of ${r.holder} (${r.shareChars} a minute); it can never pass: send the text in smaller events`,
      );
    case 'share':
      return new GatewayError(
        'rate_limit_exceeded',
        `the share of ${r.holder} is ${r.shareChars} ${text} a minute, ${r.holderUsed} of them used; this event's ${r.chars} do not fit; retry after ${r.retryAfterS}s`,
      );
    case 'key':
      return new GatewayError(
        'rate_limit_exceeded',
        `the guardrails cannot scan more text for ${r.holder} now (its share: ${r.shareChars} ${text} a minute, ${r.holderUsed} of them used); retry after ${r.retryAfterS}s`,
      );
  }
}
