/**
 * Per-key budgets: reserve an estimate before the provider call, settle the actual cost after.
 * Concurrent requests (on any pod) cannot overspend by more than the estimates in flight, a
 * settle is charged once however often it is repeated, and reservations of a crashed pod
 * expire on their own.
 */
import type { BudgetPeriod } from './period.ts';
import type { AutoRechargePolicy } from './recharge.ts';
import type { KeyRef } from './types.ts';

export interface BudgetLimit {
  limitUsd: number;
  period: BudgetPeriod;
}

export interface ReserveRequest extends KeyRef {
  budget: BudgetLimit;
  /** Rounded up to the next micro-dollar. */
  estimateUsd: number;
  /** Omit (or pass undefined) when the key's auto-recharge is disabled. */
  autoRecharge?: AutoRechargePolicy | undefined;
  /** Written on ledger entries of recharges this reservation triggers (e.g. the request id). */
  reference?: string | undefined;
}

/** A held estimate. Plain data: it may be logged, serialised or settled from another pod. */
export interface Reservation extends KeyRef {
  readonly id: string;
  /** The period the reservation (and so its settle) is charged to. */
  readonly periodKey: string;
  /** The limit at reservation time; settle splits the charge between allowance and credit with it. */
  readonly limitUsd: number;
  readonly amountUsd: number;
  readonly expiresAt: number;
  /** Retention of the period's spend counter, carried so settle needs no clock arithmetic. */
  readonly periodRetentionMs: number | undefined;
}

export type ReserveResult =
  | {
      ok: true;
      reservation: Reservation;
      /** Left for further reservations after this one. */
      remainingUsd: number;
      /** Moved from the tenant wallet by auto-recharge during this call (0 if none). */
      rechargedUsd: number;
    }
  | {
      ok: false;
      /** What was left (never negative), to quote in the 402 message. */
      remainingUsd: number;
      rechargedUsd: number;
    };

export interface SettleResult {
  /** False when this reservation had already been settled or released: nothing was charged now. */
  applied: boolean;
  chargedUsd: number;
  /** Left for new reservations, never negative. */
  remainingUsd: number;
}

export interface ChargeRequest extends KeyRef {
  budget: BudgetLimit;
  amountUsd: number;
  /**
   * Makes the charge idempotent: a second charge with the same id is not applied. Random when
   * absent. When it names a hold (one `retain` made), the hold is dropped in the same step.
   */
  id?: string | undefined;
  /**
   * How long the id is remembered against a second charge (default: the store's
   * `settledMemoryMs`). Settlements of long-running work repeat it far longer apart than a
   * request's settle does (a read racing a sweep after a crash between charge and claim).
   */
  rememberMs?: number | undefined;
}

export interface BudgetState {
  periodKey: string;
  limitUsd: number;
  /** Settled spend in the current period. */
  spentUsd: number;
  /** Recharged money not yet spent. */
  creditUsd: number;
  /** Live reservations. */
  heldUsd: number;
  /** What a new reservation may take now: allowance left + credit − held (negative while holds exceed it). */
  remainingUsd: number;
  rechargedThisMonthUsd: number;
}

export interface BudgetStore {
  /** Atomically: expire stale holds, auto-recharge if due, then hold the estimate if it fits. */
  reserve(req: ReserveRequest): Promise<ReserveResult>;
  /**
   * Charges `actualUsd` (rounded to the nearest µ$) to the reservation's period and drops its
   * hold. Idempotent per reservation id; still charges when the hold already expired.
   */
  settle(reservation: Reservation, actualUsd: number): Promise<SettleResult>;
  /** Drops the hold without charging (the call never reached a provider). Idempotent; a later settle is ignored. */
  release(reservation: Reservation): Promise<SettleResult>;
  /** Charges without a prior reservation (spend the caller could not estimate). Never refused. */
  charge(req: ChargeRequest): Promise<SettleResult>;
  /**
   * Turns a request's reservation into a hold of its own, `holdId`, lasting `ttlMs`: the worst
   * case of work charged long after the request (a batch, a fine-tuning job) keeps counting
   * against every later reservation of the key until a `charge` with `id: holdId` replaces it
   * (or a release, a charge of 0). Atomic: the amount moves from one id to the other, never held
   * twice nor not at all; it is held even when the reservation has lapsed, as the work runs
   * anyway. Repeating it holds once. When `holdId` was charged already (its settlement came
   * first), the reservation is dropped and nothing is held: false.
   */
  retain(reservation: Reservation, holdId: string, ttlMs: number): Promise<boolean>;
  state(key: KeyRef, budget: BudgetLimit): Promise<BudgetState>;
  /**
   * What the key's retained holds (started work not yet settled, see `retain`) hold now, in
   * USD: the holds that outlive any request's reservation. For a refusal to say how much of the
   * budget unsettled work takes; read on that path only (a range of the key's holds by expiry).
   * At most `WORK_HOLDS_SUMMED` holds are summed, so a key with very many costs a refusal a
   * bounded read; `partial` says the sum is then a lower bound.
   */
  heldForWork(key: KeyRef): Promise<WorkHeld>;
}

/** What `heldForWork` found. */
export interface WorkHeld {
  usd: number;
  /** The key has more holds than were summed: `usd` is at least what they hold. */
  partial: boolean;
}

/**
 * Holds `heldForWork` sums at most: a refusal on a key with 50,000 held batches read them all
 * (126 ms of Redis work per 402); a thousand keep it under a few milliseconds.
 */
export const WORK_HOLDS_SUMMED = 1000;

export interface BudgetStoreOptions {
  /** How long a reservation holds before it is presumed abandoned. Longer than the slowest stream. */
  reservationTtlMs?: number;
  /** How long a settled reservation id is remembered to reject a duplicate settle. */
  settledMemoryMs?: number;
  /** Wallet ledger entries kept per tenant (DEFAULT_LEDGER_MAX_ENTRIES): recharges append to it. */
  ledgerMaxEntries?: number | undefined;
}

export const DEFAULT_RESERVATION_TTL_MS = 15 * 60_000;
export const DEFAULT_SETTLED_MEMORY_MS = 3_600_000;
