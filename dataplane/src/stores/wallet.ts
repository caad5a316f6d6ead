/**
 * Per-tenant wallets. Every movement is a ledger entry written atomically with the balance
 * change, so a balance can always be rebuilt from its ledger. Auto-recharges are written by
 * the budget store's reserve, in the same atomic step as the budget check.
 *
 * A ledger keeps a tenant's newest `ledgerMaxEntries` entries, and up to a tenth more
 * (ledgerTrimCount): a cache hit books one, so an unbounded ledger grew with traffic for ever. The entries trimmed away are summed beside it
 * in the same atomic step, so the balance never depends on them: a rebuild is that sum plus the
 * kept entries.
 */
import { toMicros } from './money.ts';

/** Ledger entries kept per tenant unless configured (GANTRY_LEDGER_MAX_ENTRIES). */
export const DEFAULT_LEDGER_MAX_ENTRIES = 100_000;

/** Most entries one append trims (a ledger grown before its bound shrinks over several). */
export const LEDGER_TRIM_MOST = 100;

/**
 * How many of a ledger's oldest entries an append trims, the ledger now `length` long and
 * bounded at `max`: none until it is a tenth of `max` over (at most 100, at least 1), then back
 * to `max`. Trimming one entry per append cost Redis about 9 µs a movement against about 2 in
 * batches. Mirrored by ledgerAppend (redis/lua/steps.ts).
 */
export function ledgerTrimCount(length: number, max: number): number {
  const over = length - max;
  const step = Math.min(LEDGER_TRIM_MOST, Math.max(1, Math.floor(max / 10)));
  return over >= step ? Math.min(over, LEDGER_TRIM_MOST) : 0;
}

export const LedgerKinds = ['topup', 'recharge', 'cache_credit', 'debit', 'adjustment'] as const;
export type LedgerKind = (typeof LedgerKinds)[number];

export interface LedgerEntry {
  /** Monotonic per tenant and sortable (`<ms>-<seq>`, a Redis stream id in Redis). */
  id: string;
  /** Time of the movement (the store's clock), ms since the epoch. */
  at: number;
  kind: LedgerKind;
  /** Signed: positive credits the wallet, negative debits it. */
  amountUsd: number;
  /** Balance right after this movement. */
  balanceUsd: number;
  keyId?: string | undefined;
  reference?: string | undefined;
}

/**
 * The signed amount (µ$) of a movement and whether it may overdraw: a credit adds and is
 * always booked; a debit subtracts and may not take the balance below zero unless allowed.
 */
export function signedMovement(
  direction: 'credit' | 'debit',
  m: Movement & { allowNegative?: boolean },
): { micros: number; overdraw: boolean } {
  const magnitude = Math.abs(toMicros(m.amountUsd));
  return direction === 'credit'
    ? { micros: magnitude, overdraw: true }
    : { micros: -magnitude, overdraw: m.allowNegative === true };
}

export interface Movement {
  /** Magnitude, > 0; the method gives the sign. Rounded to the nearest µ$. */
  amountUsd: number;
  keyId?: string | undefined;
  reference?: string | undefined;
  /** When set, a repeated movement with the same key is not applied again (for a day). */
  idempotencyKey?: string | undefined;
}

export type MoveResult =
  | { ok: true; entry: LedgerEntry; duplicate: false }
  /**
   * A repeat (same idempotency key within the day): nothing was applied. `entry` is the
   * original movement's, or undefined once the ledger has trimmed it.
   */
  | { ok: true; entry: LedgerEntry | undefined; duplicate: true }
  /** Debit refused: the balance would go negative. Nothing was written. */
  | { ok: false; balanceUsd: number };

export interface RebuildResult {
  /** Sum of the ledger (the trimmed entries' sum and the kept ones), now written as the balance. */
  balanceUsd: number;
  /** The balance found before the rebuild. */
  previousUsd: number;
  /** Kept entries summed. */
  entries: number;
}

export interface WalletStore {
  balance(tenant: string): Promise<number>;
  credit(
    tenant: string,
    kind: 'topup' | 'cache_credit' | 'adjustment',
    movement: Movement,
  ): Promise<MoveResult>;
  /** Refused when the balance would go negative, unless `allowNegative`. */
  debit(
    tenant: string,
    kind: 'debit' | 'adjustment',
    movement: Movement & { allowNegative?: boolean },
  ): Promise<MoveResult>;
  /**
   * Aligns the wallet with the configured funding (`Tenant.spec.wallet.balanceUsd`): the config
   * value is the total funded through config, so raising it by 50 books a 50 top-up and lowering
   * it books a negative adjustment. Idempotent, safe to call from every pod on every reload.
   */
  syncConfigured(tenant: string, configuredUsd: number): Promise<LedgerEntry | undefined>;
  /** Kept entries oldest first, strictly after `after` when given (an id trimmed away is fine). */
  ledger(tenant: string, opts?: { after?: string; limit?: number }): Promise<LedgerEntry[]>;
  /** Recomputes the balance as the sum of the ledger (trimmed entries' sum included) and stores it. */
  rebuildBalance(tenant: string): Promise<RebuildResult>;
}
