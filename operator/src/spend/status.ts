/**
 * What an ApiKey's status shows of its money: settled spend and what is left in the current
 * budget period, and when it was last used. Pure, so the rounding and the "nothing changed,
 * write nothing" rule are tested without a cluster.
 */
export interface SpendStatus {
  spendUsd: number;
  /** Absent for a key without a budget. */
  remainingUsd?: number;
  /** ISO time of the newest recorded request; absent when never used. */
  lastUsed?: string;
}

export interface SpendInputs {
  spentUsd: number;
  /** From the budget state: allowance + credit − held; undefined without a budget. */
  remainingUsd: number | undefined;
  lastUsedMs: number | undefined;
}

/** Cents are what `kubectl get gkey` can show; finer digits would make every sync a write. */
const cents = (usd: number) => Math.round(usd * 100) / 100;

export function spendStatus(i: SpendInputs): SpendStatus {
  const s: SpendStatus = { spendUsd: cents(i.spentUsd) };
  if (i.remainingUsd !== undefined) s.remainingUsd = cents(Math.max(0, i.remainingUsd));
  if (i.lastUsedMs !== undefined) s.lastUsed = new Date(i.lastUsedMs).toISOString();
  return s;
}

export function sameSpend(a: Partial<SpendStatus> | undefined, b: SpendStatus): boolean {
  return a?.spendUsd === b.spendUsd && a?.remainingUsd === b.remainingUsd && a?.lastUsed === b.lastUsed;
}

/**
 * The merge patch that makes the status show `s`. A field `s` omits is sent as null: a merge
 * patch leaves absent fields alone, so a removed budget's remainingUsd stayed shown and, never
 * equal to what is computed, was patched again every interval.
 */
export function spendPatch(s: SpendStatus): Record<keyof SpendStatus, number | string | null> {
  return { spendUsd: s.spendUsd, remainingUsd: s.remainingUsd ?? null, lastUsed: s.lastUsed ?? null };
}
