import { GatewayError } from '../errors.ts';
import type { BudgetLimit } from '../stores/budget.ts';
import { formatUsd } from '../stores/money.ts';

/**
 * The 402 for a hold the key's budget cannot cover. Amounts are stated from the micro-dollars
 * the budget store counts in (a budget of $2,500,000.30 is not 2500000.2999999998), and the
 * estimate as the whole micro-dollars the hold would take (rounded up, as the hold is). Every
 * amount here is one the store has just counted in micro-dollars (a limit is at most $1e9, an
 * estimate saturates at $1e9, a batch's hold, its worst case plus its key's unsettled batches',
 * each at most $1e9, at $2e9 (MAX_BATCH_HOLD_USD), held as stated), so formatUsd states each
 * exactly.
 */
export function budgetExceeded(
  budget: BudgetLimit,
  estimateUsd: number,
  remainingUsd: number,
  what: 'request' | 'response',
): GatewayError {
  return new GatewayError(
    'budget_exceeded',
    `budget exceeded: ${formatUsd(remainingUsd)} remaining of this key's ${budget.period} budget of ${formatUsd(budget.limitUsd)}, ` +
      `and this ${what} is estimated at ${formatUsd(estimateUsd, 'up')}`,
  );
}
