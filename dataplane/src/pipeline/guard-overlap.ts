/**
 * Whether a chat request's guardrail scan may run while its admission (rate limit, budget,
 * wallet) is still in flight at the store. The scan is CPU work that would otherwise wait for
 * the admission's round trip; its verdict is only acted on after admission answered, so a
 * client still sees the money error first and a blocked request is never charged. What the
 * overlap risks is the scan's CPU on a request that admission then refuses: a refused
 * client must not be able to make the gateway scan much, so only small bodies qualify.
 */
import type { ApiKeySpec } from '@gantry/crds';

/**
 * Bodies up to this size are scanned during admission: about 2k tokens, which the default
 * guardrails scan in about 0.2 ms when the text is new (~20-25 µs per KB; a 1 KB turn 24 µs,
 * a 16 KB one 0.36 ms, p50 on this machine), the order of what a refused metered request
 * costs already (parsing the body, counting its prompt tokens for the estimate).
 */
export const SCAN_DURING_ADMISSION_MAX_BYTES = 8 * 1024;

const DIGITS = /^\d{1,9}$/;

/**
 * Only where admission goes to the store (a key with a rate limit or a budget) and the text
 * the guard reads is all in the body, so its declared length bounds the scan: Chat
 * Completions and Messages (Responses may load a stored conversation; a RAG query adds
 * retrieved context). A body without a declared length waits for admission.
 */
export function scansDuringAdmission(
  spec: Pick<ApiKeySpec, 'budget' | 'rateLimit'>,
  endpoint: string,
  contentLength: string | string[] | undefined,
): boolean {
  if (spec.budget === undefined && spec.rateLimit === undefined) return false;
  if (endpoint !== 'chat' && endpoint !== 'messages') return false;
  if (typeof contentLength !== 'string' || !DIGITS.test(contentLength)) return false;
  return Number(contentLength) <= SCAN_DURING_ADMISSION_MAX_BYTES;
}
