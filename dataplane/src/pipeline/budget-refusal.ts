import { GatewayError } from '../errors.ts';
import type { BudgetLimit } from '../stores/budget.ts';
import { formatUsd } from '../stores/money.ts';

/**
 * The 402 for a hold the key's budget cannot cover. Amounts are stated from the micro-dollars
 * the budget store counts in (a budget of $2,500,000.30 is not 2500000.2999999998), and the
 * estimate as the whole micro-dollars the hold would take (rounded up, as the hold is). Every
 * amount here is one the store has just counted in micro-dollars (a limit is at most $1e9, an
 * estimate, a batch's or a fine-tuning job's hold too, saturates at $1e9), so formatUsd states
 * each exactly.
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
