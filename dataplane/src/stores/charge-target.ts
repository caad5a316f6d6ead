/**
 * A charge without a reservation is a settle of a reservation made up on the spot: the period
 * of the moment it is made, the key's limit, the charge's id. The Redis store charges through
 * it, and a charge the store could not take is journaled as it (journal/entries.ts), so the
 * journal's replay, a settle of that reservation, is the very charge that failed: once per id.
 */
import type { ChargeRequest, Reservation } from './budget.ts';
import { periodRetentionMs, periodWindow } from './period.ts';

export function chargeTarget(req: ChargeRequest & { id: string }, nowMs: number): Reservation {
  const window = periodWindow(req.budget.period, nowMs);
  return {
    tenant: req.tenant,
    keyId: req.keyId,
    id: req.id,
    periodKey: window.key,
    limitUsd: req.budget.limitUsd,
    // Nothing was held: settling drops no hold and charges the amount it is given.
    amountUsd: 0,
    expiresAt: nowMs,
    periodRetentionMs: periodRetentionMs(window, nowMs),
  };
}
