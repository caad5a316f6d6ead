import { describe, expect, it } from 'vitest';
import { ApiKeySpec } from '@gantry/crds';
import { MAX_ESTIMATE_USD } from '../accounting/estimate.ts';
import { MICROS_PER_USD } from '../stores/money.ts';
import { budgetExceeded } from './budget-refusal.ts';

describe('budgetExceeded', () => {
  it('is a 402 stating each amount from micro-dollars, the estimate as held (rounded up)', () => {
    const e = budgetExceeded({ limitUsd: 0.1 + 0.2, period: 'daily' }, 1e-7, 0.30000000000000004, 'response');
    expect(e.status).toBe(402);
    expect(e.message).toBe(
      "budget exceeded: $0.30 remaining of this key's daily budget of $0.30, and this response is estimated at $0.000001",
    );
  });

  it('states the largest amounts a refusal can carry exactly: a $1e9 budget, a batch hold of $2e9', () => {
    const limitMax = ApiKeySpec.properties.budget.properties.limitUsd.maximum ?? Number.POSITIVE_INFINITY;
    expect(limitMax).toBe(1e9);
    // Both within the micro-dollars counted exactly (formatUsd throws past them).
    expect(Math.max(limitMax, 2 * MAX_ESTIMATE_USD) * MICROS_PER_USD).toBeLessThan(Number.MAX_SAFE_INTEGER);
    const e = budgetExceeded({ limitUsd: limitMax, period: 'total' }, 2 * MAX_ESTIMATE_USD, 0.01, 'request');
    expect(e.message).toBe(
      "budget exceeded: $0.01 remaining of this key's total budget of $1000000000.00, and this request is estimated at $2000000000.00",
    );
  });

  it('names what unsettled batches and fine-tuning jobs hold, when they hold anything', () => {
    const e = budgetExceeded({ limitUsd: 1, period: 'monthly' }, 0.05, 0.02, 'request', {
      usd: 0.98,
      partial: false,
    });
    expect(e.message).toBe(
      "budget exceeded: $0.02 remaining of this key's monthly budget of $1.00 ($0.98 of it is held for this key's unsettled batches and fine-tuning jobs until they settle), and this request is estimated at $0.05",
    );
    expect(
      budgetExceeded({ limitUsd: 1, period: 'monthly' }, 0.05, 0.02, 'request', { usd: 0, partial: false })
        .message,
    ).not.toContain('held');
  });

  it('says at least when the key holds more than were summed', () => {
    const e = budgetExceeded({ limitUsd: 1, period: 'monthly' }, 0.05, 0.02, 'request', {
      usd: 0.5,
      partial: true,
    });
    expect(e.message).toContain("(at least $0.50 of it is held for this key's unsettled batches");
  });
});
