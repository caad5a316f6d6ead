/** Calendar days (UTC, `YYYY-MM-DD`) for analytics periods. Pure. */
import type { Period } from './analytics-types.ts';

const DAY_MS = 86_400_000;
const DAY_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

export interface DayRange {
  from: string;
  to: string;
}

/** The day as written, when it is a real calendar date (2025-02-30 is not); undefined otherwise. */
export function parseDay(value: string): string | undefined {
  const m = DAY_RE.exec(value);
  if (!m) return undefined;
  const [, y, mo, d] = m.map(Number) as [number, number, number, number];
  const t = Date.UTC(y, mo - 1, d);
  const back = new Date(t);
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d)
    return undefined;
  return value;
}

export const dayOfMs = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

const msOfDay = (day: string): number => Date.parse(`${day}T00:00:00Z`);

export const addDays = (day: string, n: number): string => dayOfMs(msOfDay(day) + n * DAY_MS);

/** Days from `from` to `to`, both included (0 when `to` is before `from`). */
export const daysInRange = (r: DayRange): number =>
  Math.max(0, Math.round((msOfDay(r.to) - msOfDay(r.from)) / DAY_MS) + 1);

export function eachDay(r: DayRange): string[] {
  const out: string[] = [];
  for (let d = r.from; d <= r.to; d = addDays(d, 1)) out.push(d);
  return out;
}

export const toPeriod = (r: DayRange): Period => ({
  start_date: r.from,
  end_date: r.to,
  days: daysInRange(r),
});

/** The current UTC month: its first day through today. */
export function monthToDate(nowMs: number): DayRange {
  const today = dayOfMs(nowMs);
  return { from: `${today.slice(0, 8)}01`, to: today };
}

/** The `n` days ending today. */
export const lastDays = (nowMs: number, n: number): DayRange => {
  const to = dayOfMs(nowMs);
  return { from: addDays(to, -(n - 1)), to };
};

export interface MonthProgress {
  month: string;
  daysInMonth: number;
  /** Fractional days elapsed since the month began, at least 1. */
  daysElapsed: number;
  range: DayRange;
}

export function monthProgress(nowMs: number): MonthProgress {
  const d = new Date(nowMs);
  const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  const end = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  return {
    month: dayOfMs(nowMs).slice(0, 7),
    daysInMonth: Math.round((end - start) / DAY_MS),
    daysElapsed: Math.max(1, (nowMs - start) / DAY_MS),
    range: monthToDate(nowMs),
  };
}
