import { GatewayError } from '../errors.ts';
import type { BudgetLimit } from '../stores/budget.ts';
import { formatUsd, MICROS_PER_USD, type Rounding } from '../stores/money.ts';

/**
 * An amount for a message: exact to the micro-dollar (money.ts), or to the cent past what
 * micro-dollars count exactly (~9e9 USD; a sum of many capped batch estimates can get there),
 * where formatUsd would throw and turn a 402 into a 500.
 */
export function usdText(usd: number, rounding: Rounding = 'nearest'): string {
  if (Number.isFinite(usd) && Math.abs(usd) * MICROS_PER_USD <= Number.MAX_SAFE_INTEGER)
    return formatUsd(usd, rounding);
  return `$${usd.toFixed(2)}`;
}

/**
 * The 402 for a hold the key's budget cannot cover. Amounts are stated from the micro-dollars
 * the budget store counts in (a budget of $2,500,000.30 is not 2500000.2999999998), and the
 * estimate as the whole micro-dollars the hold would take (rounded up, as the hold is).
 */
export function budgetExceeded(
  budget: BudgetLimit,
  estimateUsd: number,
  remainingUsd: number,
  what: 'request' | 'response',
): GatewayError {
  return new GatewayError(
    'budget_exceeded',
    `budget exceeded: ${usdText(remainingUsd)} remaining of this key's ${budget.period} budget of ${usdText(budget.limitUsd)}, ` +
      `and this ${what} is estimated at ${usdText(estimateUsd, 'up')}`,
  );
}
