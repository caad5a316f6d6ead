/** Query parameters of the analytics endpoints, validated: a bad one is a 400 that names it. */
import { addDays, dayOfMs, daysInRange, parseDay, type DayRange } from '../../accounting/analytics-dates.ts';
import { invalidParam } from '../../errors.ts';

export type Query = Record<string, unknown>;

/** Longest period one request may cover. */
export const MAX_RANGE_DAYS = 366;
export const DEFAULT_LOG_LIMIT = 100;
export const MAX_LOG_LIMIT = 1000;

const shown = (v: string): string => JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);

/** A single string parameter; absent or empty is undefined (UIs send `model=` for "any"). */
export function stringParam(q: Query, name: string): string | undefined {
  const v = q[name];
  if (v === undefined) return undefined;
  if (Array.isArray(v)) throw invalidParam(name, 'must be given once');
  if (typeof v !== 'string') throw invalidParam(name, 'must be a string');
  const trimmed = v.trim();
  return trimmed === '' ? undefined : trimmed;
}

function dayParam(q: Query, name: string): string | undefined {
  const v = stringParam(q, name);
  if (v === undefined) return undefined;
  const day = parseDay(v);
  if (!day) throw invalidParam(name, `must be a calendar date as YYYY-MM-DD, got ${shown(v)}`);
  return day;
}

/**
 * `start_date`..`end_date`, both inclusive. Missing ends default: the end to today (or the start
 * when that is later), the start to `defaultDays` before the end, or to `defaultRange` when
 * neither is given.
 */
export function dateRange(q: Query, nowMs: number, defaultRange: DayRange, defaultDays: number): DayRange {
  const start = dayParam(q, 'start_date');
  const end = dayParam(q, 'end_date');
  let range: DayRange;
  if (start === undefined && end === undefined) range = defaultRange;
  else if (start === undefined) range = { from: addDays(end!, -(defaultDays - 1)), to: end! };
  else if (end === undefined) {
    const today = dayOfMs(nowMs);
    range = { from: start, to: today < start ? start : today };
  } else range = { from: start, to: end };
  if (range.to < range.from) throw invalidParam('end_date', `must not be before start_date (${range.from})`);
  const days = daysInRange(range);
  if (days > MAX_RANGE_DAYS)
    throw invalidParam(
      'end_date',
      `the period ${range.from}..${range.to} spans ${days} days; at most ${MAX_RANGE_DAYS} are allowed`,
    );
  return range;
}

export function limitParam(q: Query): number {
  const v = stringParam(q, 'limit');
  if (v === undefined) return DEFAULT_LOG_LIMIT;
  if (!/^\d+$/.test(v))
    throw invalidParam('limit', `must be an integer from 1 to ${MAX_LOG_LIMIT}, got ${shown(v)}`);
  const n = Number(v);
  if (n < 1 || n > MAX_LOG_LIMIT) throw invalidParam('limit', `must be from 1 to ${MAX_LOG_LIMIT}, got ${n}`);
  return n;
}

/** `key` (an ApiKey id, `namespace/name`; `key_id` is accepted too), `model` and `provider`. */
export function dimensionFilters(q: Query): { keyId?: string; model?: string; provider?: string } {
  const key = stringParam(q, 'key');
  const keyId = stringParam(q, 'key_id');
  if (key !== undefined && keyId !== undefined && key !== keyId)
    throw invalidParam('key', 'key and key_id name different keys; give one');
  const out: { keyId?: string; model?: string; provider?: string } = {};
  const k = key ?? keyId;
  if (k !== undefined) out.keyId = k;
  const model = stringParam(q, 'model');
  if (model !== undefined) out.model = model;
  const provider = stringParam(q, 'provider');
  if (provider !== undefined) out.provider = provider;
  return out;
}
