/**
 * When an owned object the upstream answers 404 for is gone for good. One 404 is not proof: a
 * provider's file can 404 for a moment after upload, a deployment re-pointed to another account
 * and back answers 404 meanwhile. Dropping the record (or releasing held work's hold) on one
 * would lose the caller's only access to their object through Gantry, or free a budget the work
 * will still be charged against. So an object is gone only once the upstream has answered 404
 * on `GONE_AFTER_404S` reads spread over at least `GONE_AFTER_MS`, with no success between (a
 * success clears the marks). Reads bunched together count once (`COUNTED_404_SPACING_MS`): a
 * caller reading its batch three times in one second, or a sweep ticking every minute, cannot
 * make its hold go any sooner than the rule. See docs/decisions.md (Money). Pure.
 */

/** The upstream 404s counted on an object since it was last found: kept on its ownership record. */
export interface Missing {
  /** When the first of them was seen (ms since the epoch). */
  first404At: number;
  /** How many were counted: at most one per `COUNTED_404_SPACING_MS` after the first. */
  count404: number;
}

/** Counted 404s that make an object gone. */
export const GONE_AFTER_404S = 3;
/** The least time between the first counted 404 and the one that makes an object gone. */
export const GONE_AFTER_MS = 24 * 3_600_000;
/**
 * The n-th counted 404 is one seen at least (n - 1) times this after the first: 12 h with the
 * defaults, so the three are at the start, past the middle and past the end of the day.
 */
export const COUNTED_404_SPACING_MS = GONE_AFTER_MS / (GONE_AFTER_404S - 1);

const usable = (n: unknown): n is number => typeof n === 'number' && Number.isFinite(n);

/** The marks on a record, if it has any that can be used (a record from an older writer has none). */
export function missingOf(record: Partial<Missing>): Missing | undefined {
  const { first404At, count404 } = record;
  return usable(first404At) && usable(count404) && count404 >= 1 ? { first404At, count404 } : undefined;
}

/** The marks after one more upstream 404 seen at `now`. */
export function after404(before: Missing | undefined, now: number): Missing {
  if (!before) return { first404At: now, count404: 1 };
  // A clock behind the first mark (another pod's) counts nothing: never a shortcut.
  const due = before.first404At + before.count404 * COUNTED_404_SPACING_MS;
  return now >= due ? { ...before, count404: before.count404 + 1 } : before;
}

/** Whether marks seen by `now` make the object gone for good. */
export function goneForGood(missing: Missing | undefined, now: number): boolean {
  if (!missing) return false;
  return missing.count404 >= GONE_AFTER_404S && now - missing.first404At >= GONE_AFTER_MS;
}

/** A record with its 404 marks, or without any (`undefined`: found again). */
export function withMissing<R extends Partial<Missing>>(record: R, missing: Missing | undefined): R {
  const { first404At: _first, count404: _count, ...rest } = record;
  return (missing ? { ...rest, ...missing } : rest) as R;
}
