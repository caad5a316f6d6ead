/**
 * The end of a metered request in one step: settle (or release) the budget hold, correct the
 * rate limit's token count and write the usage record. With Redis that is one script, so one
 * round trip and one command instead of three; in process the stores are called directly
 * (nothing to save), so only the Redis stores offer a settler.
 */
import type { UsageRecord } from '../accounting/usage.ts';
import type { Reservation } from './budget.ts';
import type { RateTicket } from './rate-limiter.ts';

export interface SettlementRequest {
  /** Charge `amountUsd` against the hold (0 releases it). */
  budget?: { reservation: Reservation; amountUsd: number } | undefined;
  /** The token count the request really used. */
  rate?: { ticket: RateTicket; actualTokens: number } | undefined;
  /** The request's usage record (same tenant as the reservation and the ticket). */
  record: UsageRecord;
}

export interface Settler {
  /**
   * All parts atomically. Each part is idempotent on its own (the settle per reservation id,
   * the adjust per ticket, the record per record id), so after a failure, including a reply
   * lost after the script ran, the caller may redo any part through its own store.
   */
  settle(req: SettlementRequest): Promise<void>;
}
