/**
 * What an upstream 404 on an owned object does to its record (the rule is gone.ts's): each is
 * marked on the record, and only once the object is gone for good is the record dropped, and
 * held work (a batch, a fine-tuning job) released: settled at $0 under its own settlement id, so
 * its hold goes, once, and a read that finds it again later is not charged for it (the claim is
 * taken). A success on the object clears the marks. Reads by callers and sweeps alike count.
 */
import type { BudgetLimit, Stores } from '../../stores/index.ts';
import type { OwnedRecord } from '../../stores/ownership/types.ts';
import { after404, goneForGood, missingOf, withMissing } from './gone.ts';
import { releaseAtNothing, type HeldWork } from './held-work.ts';

/** Held work's settlement, released at nothing when the work is gone for good. */
export interface Release {
  work: HeldWork;
  /** The key's budget, if it has one: the hold is in it. */
  budget: BudgetLimit | undefined;
}

/**
 * One more upstream 404 on `record`'s object, seen at `now`. True when the object is gone for
 * good (its record dropped, its hold released) or its record already went; false while it is
 * only not found now. A store that fails leaves the marks or the release to the next 404.
 */
export async function missingUpstream(
  stores: Pick<Stores, 'ownership' | 'budgets'>,
  record: OwnedRecord,
  now: number,
  release?: Release,
): Promise<boolean> {
  const owned = stores.ownership;
  const marked = await owned.amend(record.tenant, record.family, record.id, (r) =>
    withMissing(r, after404(missingOf(r), now)),
  );
  if (!marked) return true;
  if (!goneForGood(missingOf(marked), now)) return false;
  // The release first: a record dropped before it would leave the hold to its TTL.
  if (release) await releaseAtNothing(stores, release.budget, release.work);
  // Only if still gone: a success another pod saw meanwhile keeps the record.
  const left = await owned.amend(record.tenant, record.family, record.id, (r) =>
    goneForGood(missingOf(r), now) ? null : r,
  );
  return !left;
}

/** The object answered: the 404s marked on its record (if any) were not its going. */
export async function foundUpstream(stores: Pick<Stores, 'ownership'>, record: OwnedRecord): Promise<void> {
  if (!missingOf(record)) return;
  await stores.ownership.amend(record.tenant, record.family, record.id, (r) => withMissing(r, undefined));
}
