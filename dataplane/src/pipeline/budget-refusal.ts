import { GatewayError } from '../errors.ts';
import type { BudgetLimit, BudgetStore, WorkHeld } from '../stores/budget.ts';
import { formatUsd } from '../stores/money.ts';
import type { KeyRef } from '../stores/types.ts';

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
  /** What started work not yet settled holds of the budget, when known (named only when > 0). */
  workHeld: WorkHeld = { usd: 0, partial: false },
): GatewayError {
  const held =
    workHeld.usd > 0
      ? ` (${workHeld.partial ? 'at least ' : ''}${formatUsd(workHeld.usd)} of it is held for this key's unsettled batches and fine-tuning jobs until they settle)`
      : '';
  const err = new GatewayError(
    'budget_exceeded',
    `budget exceeded: ${formatUsd(remainingUsd)} remaining of this key's ${budget.period} budget of ${formatUsd(budget.limitUsd)}${held}, ` +
      `and this ${what} is estimated at ${formatUsd(estimateUsd, 'up')}`,
  );
  if (held) statingWorkHeld.add(err);
  return err;
}

const statingWorkHeld = new WeakSet<GatewayError>();

/**
 * Whether a budget 402 already states what the key's started work holds, so a create's
 * refusal naming its unsettled batches or jobs does not state the amount a second time.
 */
export const statesWorkHeld = (err: GatewayError): boolean => statingWorkHeld.has(err);

/**
 * The 402 for a refused reservation, naming what the key's unsettled work holds when it holds
 * anything: a caller refused for a batch or job it started should not have to guess why a
 * small request does not fit. Asked of the store only here, on the refusal; a store that
 * cannot say leaves it out (the refusal stands either way).
 */
export async function budgetRefusal(
  budgets: Pick<BudgetStore, 'heldForWork'>,
  key: KeyRef,
  budget: BudgetLimit,
  estimateUsd: number,
  remainingUsd: number,
  what: 'request' | 'response',
): Promise<GatewayError> {
  const workHeld = await budgets.heldForWork(key).catch(() => undefined);
  return budgetExceeded(budget, estimateUsd, remainingUsd, what, workHeld);
}
