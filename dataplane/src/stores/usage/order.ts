/** Ordering and range checks shared by both usage stores, so their answers are identical. */
import type { RollupRow, SecurityRow, UsageRecord } from '../../accounting/usage.ts';

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** `YYYY-MM-DD` strings compare like the dates they name. */
export const inRange = (day: string, q: { from: string; to: string }): boolean =>
  day >= q.from && day <= q.to;

export const compareRows = (a: RollupRow, b: RollupRow): number =>
  cmp(a.day, b.day) ||
  cmp(a.tenant, b.tenant) ||
  cmp(a.keyId, b.keyId) ||
  cmp(a.model, b.model) ||
  cmp(a.provider, b.provider);

export const compareSecurity = (a: SecurityRow, b: SecurityRow): number =>
  cmp(a.day, b.day) ||
  cmp(a.tenant, b.tenant) ||
  cmp(a.guardrail, b.guardrail) ||
  cmp(a.category, b.category) ||
  cmp(a.action, b.action);

/** Newest first; records of the same instant keep the (newest-first) order they came in. */
export const byNewest = (records: UsageRecord[]): UsageRecord[] => records.sort((a, b) => b.at - a.at);
