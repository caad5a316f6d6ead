/**
 * Guardrail violations by guardrail, category and day, and their trend. Pure. Request totals
 * come from the rollups (a request with a non-`allow` verdict is one violation); breakdowns from
 * the security counters (a request with findings of two guardrails counts under both).
 */
import { addDays, eachDay, toPeriod, type DayRange } from './analytics-dates.ts';
import type { ActionCounts, SecurityView } from './analytics-types.ts';
import { cmp, groupBy, sum, violations } from './analytics-sum.ts';
import type { RollupRow, SecurityRow } from './usage.ts';

export const TREND_WINDOW_DAYS = 7;

/** The days the trend needs: the period, or more when the period is shorter than two windows. */
export function securityQueryRange(period: DayRange): DayRange {
  const trendFrom = addDays(period.to, -(2 * TREND_WINDOW_DAYS - 1));
  return { from: trendFrom < period.from ? trendFrom : period.from, to: period.to };
}

function actionCounts(rows: readonly SecurityRow[]): ActionCounts {
  const of = (a: string) => sum(rows, (r) => (r.action === a ? r.count : 0));
  return { block: of('block'), redact: of('redact'), flag: of('flag') };
}

/**
 * `rollups` and `security` may extend before the period (see securityQueryRange): everything
 * but the trend counts the period only.
 */
export function securityView(
  tenant: string | null,
  period: DayRange,
  rollups: readonly RollupRow[],
  security: readonly SecurityRow[],
): SecurityView {
  const inPeriod = <T extends { day: string }>(r: T) => r.day >= period.from && r.day <= period.to;
  const rows = rollups.filter(inPeriod);
  const sec = security.filter(inPeriod);

  const byGuardrail = [...groupBy(sec, (r) => r.guardrail)]
    .map(([guardrail, g]) => ({
      guardrail,
      violations: sum(g, (r) => r.count),
      findings: sum(g, (r) => r.findings),
      by_action: actionCounts(g),
    }))
    .sort((a, b) => b.violations - a.violations || cmp(a.guardrail, b.guardrail));
  const byCategory = [...groupBy(sec, (r) => JSON.stringify([r.guardrail, r.category]))]
    .map(([, g]) => ({
      guardrail: g[0]!.guardrail,
      category: g[0]!.category,
      violations: sum(g, (r) => r.count),
      findings: sum(g, (r) => r.findings),
      by_action: actionCounts(g),
    }))
    .sort(
      (a, b) => b.violations - a.violations || cmp(a.guardrail, b.guardrail) || cmp(a.category, b.category),
    );

  const perDay = groupBy(rollups, (r) => r.day);
  const dayCounts = (day: string) => {
    const g = perDay.get(day) ?? [];
    return {
      date: day,
      violations: sum(g, violations),
      blocked: sum(g, (r) => r.guardrailBlocks),
      redacted: sum(g, (r) => r.guardrailRedactions),
      flagged: sum(g, (r) => r.guardrailFlags),
    };
  };

  const windowSum = (endDay: string) =>
    eachDay({ from: addDays(endDay, -(TREND_WINDOW_DAYS - 1)), to: endDay }).reduce(
      (s, d) => s + dayCounts(d).violations,
      0,
    );
  const current = windowSum(period.to);
  const previous = windowSum(addDays(period.to, -TREND_WINDOW_DAYS));

  return {
    tenant_id: tenant,
    period: toPeriod(period),
    totals: {
      violations: sum(rows, violations),
      blocked: sum(rows, (r) => r.guardrailBlocks),
      redacted: sum(rows, (r) => r.guardrailRedactions),
      flagged: sum(rows, (r) => r.guardrailFlags),
      findings: sum(sec, (r) => r.findings),
    },
    by_guardrail: byGuardrail,
    by_category: byCategory,
    by_day: eachDay(period).map(dayCounts),
    trend: {
      window_days: TREND_WINDOW_DAYS,
      current,
      previous,
      change_percent: previous > 0 ? Math.round(((current - previous) / previous) * 1000) / 10 : null,
      direction: current > previous ? 'up' : current < previous ? 'down' : 'flat',
    },
  };
}
