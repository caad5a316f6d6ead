/**
 * Budget periods are calendar windows in UTC, named by a key derived from the time alone, so
 * every pod agrees on the current period without coordination.
 */
import type { ApiKeySpec } from '@gantry/crds';

export type BudgetPeriod = NonNullable<ApiKeySpec['budget']>['period'];

export interface PeriodWindow {
  /** `d2025-01-31`, `m2025-01` or `total`. */
  key: string;
  startMs: number;
  /** Exclusive end; undefined for `total`, which never ends. */
  endMs: number | undefined;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/**
 * The last window of each period, reused while `nowMs` falls inside it: every metered request
 * asks, and the answer changes once a day at most. Frozen, since callers share it.
 */
const lastWindow = new Map<BudgetPeriod, PeriodWindow>();

export function periodWindow(period: BudgetPeriod, nowMs: number): PeriodWindow {
  const last = lastWindow.get(period);
  if (last && nowMs >= last.startMs && (last.endMs === undefined || nowMs < last.endMs)) return last;
  const window = Object.freeze(computeWindow(period, nowMs));
  lastWindow.set(period, window);
  return window;
}

function computeWindow(period: BudgetPeriod, nowMs: number): PeriodWindow {
  const d = new Date(nowMs);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  switch (period) {
    case 'daily': {
      const day = d.getUTCDate();
      return {
        key: `d${pad(y, 4)}-${pad(m + 1)}-${pad(day)}`,
        startMs: Date.UTC(y, m, day),
        endMs: Date.UTC(y, m, day + 1),
      };
    }
    case 'monthly':
      return { key: `m${pad(y, 4)}-${pad(m + 1)}`, startMs: Date.UTC(y, m, 1), endMs: Date.UTC(y, m + 1, 1) };
    case 'total':
      return { key: 'total', startMs: 0, endMs: undefined };
  }
}

/** `2025-01`: the calendar month (UTC) that auto-recharge caps count in. */
export function monthKey(nowMs: number): string {
  const month = periodWindow('monthly', nowMs);
  return month.key.slice(1);
}

/** How long a per-period counter must live: to the period's end plus a grace for late settles and reports. */
export function periodRetentionMs(
  window: PeriodWindow,
  nowMs: number,
  graceMs = 40 * 86_400_000,
): number | undefined {
  return window.endMs === undefined ? undefined : Math.max(0, window.endMs - nowMs) + graceMs;
}
