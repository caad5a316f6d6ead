/**
 * Key health: budget use and auto-recharge status per key, from the key's config and the budget
 * store's current state. Pure; the route reads the states.
 */
import type { BudgetState } from '../stores/budget.ts';
import { fromMicros, toMicros } from '../stores/money.ts';
import { cmp } from './analytics-sum.ts';
import type { KeyHealth } from './analytics-types.ts';

export interface KeyHealthInput {
  keyId: string;
  tenant: string;
  role: 'user' | 'admin';
  budget: { limitUsd: number; period: 'daily' | 'monthly' | 'total' } | undefined;
  autoRecharge:
    { enabled: boolean; thresholdUsd: number; amountUsd: number; monthlyCapUsd: number } | undefined;
  /** The budget store's state; undefined when the key has no budget. */
  state: BudgetState | undefined;
}

/** Below this share of the limit left, a key is in `warning`. */
export const WARNING_SHARE = 0.2;

const usd = (n: number): number => fromMicros(toMicros(n));
const keyName = (id: string): string => id.slice(id.lastIndexOf('/') + 1);

export function keyHealth(k: KeyHealthInput): KeyHealth {
  const s = k.budget && k.state;
  const budget: KeyHealth['budget'] =
    k.budget && s
      ? {
          limit_usd: usd(k.budget.limitUsd),
          period: k.budget.period,
          period_key: s.periodKey,
          spent_usd: usd(s.spentUsd),
          held_usd: usd(s.heldUsd),
          credit_usd: usd(s.creditUsd),
          remaining_usd: usd(s.remainingUsd),
          percent_used:
            k.budget.limitUsd > 0 ? Math.round((s.spentUsd / k.budget.limitUsd) * 10_000) / 100 : null,
        }
      : null;
  const ar = k.autoRecharge;
  const recharged = s ? usd(s.rechargedThisMonthUsd) : null;
  const autoRecharge: KeyHealth['auto_recharge'] = ar
    ? {
        enabled: ar.enabled,
        threshold_usd: usd(ar.thresholdUsd),
        amount_usd: usd(ar.amountUsd),
        monthly_cap_usd: usd(ar.monthlyCapUsd),
        recharged_this_month_usd: recharged,
        cap_remaining_usd:
          recharged === null
            ? null
            : fromMicros(Math.max(0, toMicros(ar.monthlyCapUsd) - toMicros(recharged))),
      }
    : null;
  return {
    key_id: k.keyId,
    name: keyName(k.keyId),
    tenant_id: k.tenant,
    role: k.role,
    status: status(budget),
    budget,
    auto_recharge: autoRecharge,
  };
}

function status(b: KeyHealth['budget']): KeyHealth['status'] {
  if (!b) return 'unlimited';
  if (b.remaining_usd <= 0) return 'exhausted';
  return b.remaining_usd < b.limit_usd * WARNING_SHARE ? 'warning' : 'ok';
}

/** Tenant, then key id. */
export function keyHealthList(inputs: readonly KeyHealthInput[]): KeyHealth[] {
  return inputs.map(keyHealth).sort((a, b) => cmp(a.tenant_id, b.tenant_id) || cmp(a.key_id, b.key_id));
}
