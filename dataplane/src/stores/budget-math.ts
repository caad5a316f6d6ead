/**
 * Budget arithmetic in micro-dollars, shared by the in-process store and mirrored by the Redis
 * Lua scripts.
 *
 * A key's money has two sources: the period allowance (`limit` per day/month/ever, from the
 * ApiKey) and a credit balance filled by auto-recharge from the tenant wallet. Spend draws on
 * the allowance first and the credit after, so recharged money carries over between periods
 * instead of vanishing when a daily or monthly allowance resets. Spend beyond both (an actual
 * cost above its estimate) stays as overspend of the period: credit never goes negative, and
 * the next period starts with its full allowance.
 */

export interface BudgetFigures {
  limit: number;
  /** Settled spend in the current period. */
  spent: number;
  /** Recharged money not yet spent; never negative. */
  credit: number;
  /** Sum of live reservations. */
  held: number;
}

export function allowanceLeft(limit: number, spent: number): number {
  return Math.max(0, limit - spent);
}

/** What a new reservation may still take. */
export function available(f: BudgetFigures): number {
  return allowanceLeft(f.limit, f.spent) + f.credit - f.held;
}

/** A reservation fits when something is left and the estimate is within it. */
export function fits(availableMicros: number, estimateMicros: number): boolean {
  return availableMicros > 0 && estimateMicros <= availableMicros;
}

/**
 * How a settled charge splits: the period allowance first, then the recharged credit, and what
 * neither covers is overspend (it only raises the period's spend).
 */
export function splitCharge(
  limit: number,
  spentBefore: number,
  credit: number,
  amount: number,
): { fromAllowance: number; fromCredit: number; overspend: number } {
  const fromAllowance = Math.min(amount, allowanceLeft(limit, spentBefore));
  const fromCredit = Math.min(amount - fromAllowance, Math.max(0, credit));
  return { fromAllowance, fromCredit, overspend: amount - fromAllowance - fromCredit };
}
