/**
 * Work charged long after the request that started it (a batch, a fine-tuning job): its worst
 * case is held against the key's budget from its creation until it settles, so it limits every
 * other spend of the key (chat, embeddings, other jobs) meanwhile, on every pod. The hold lives
 * in the budget store under the work's own id (`retainHold`); the settlement charges the real
 * cost under the same id, which drops the hold in the same atomic step, once
 * (`chargeThenClaim`). See docs/decisions.md (Money).
 */
import { GatewayError } from '../../errors.ts';
import type { BudgetLimit, ChargeRequest, Stores } from '../../stores/index.ts';
import { isStoreUnavailable } from '../../stores/index.ts';
import { OWNED_MAX_AGE_MS, type Claimable, type OwnedRecord } from '../../stores/ownership/types.ts';
import type { RequestContext } from '../context.ts';
import type { PipelineDeps } from '../forward.ts';

export type HeldScope = 'batch' | 'fine_tuning_job';

/**
 * How long a hold waits for its settlement before it lapses on its own (the key may then spend
 * it again). A batch is over within its 24 h completion window, so three days leave room for a
 * sweep to see it; a fine-tuning job has no deadline, and a month is beyond any job's run.
 */
export const HOLD_TTL_MS: Readonly<Record<HeldScope, number>> = {
  batch: 3 * 86_400_000,
  fine_tuning_job: 30 * 86_400_000,
};

/**
 * How long a settlement's id is remembered against a second charge: a read that charged and
 * died before its claim leaves the work to a later read or a sweep, which must find the charge
 * made however late it comes. A job can be read for as long as its claim could be taken (a
 * record's year), and not every job is queued for the sweep (one held at $0 is not), so the
 * marker lives as long as a claim: one small key per settled batch or job. It outlives every
 * hold too, so any retain still to come finds it.
 */
export const SETTLED_MEMORY_MS = OWNED_MAX_AGE_MS;

/** Work's hold and charge id in the budget store; the batch form is the one charges used before holds. */
export const heldWorkId = (scope: HeldScope, tenant: string, id: string): string =>
  `${scope}:${tenant}:${id}`;

/** What settles one piece of held work. */
export interface HeldWork {
  scope: HeldScope;
  tenant: string;
  keyId: string;
  /** The ownership store's once-only claim on it (`settled`). */
  claim: Claimable;
  /** What a 503 calls it: `batch`, `fine-tuning job`. */
  noun: string;
  /**
   * Other claim ids it may already be settled under (a job naming no creator was settled under
   * its reader's name before budget-holds-4). One of them taken means it was charged: its own
   * hold is then released, not charged again.
   */
  alsoSettledAs?: readonly string[];
  /**
   * Ids marked settled once this one is: a later settler that can name the work only by one of
   * them (a creator-less job whose record is gone is read as `~legacy/…`) then finds it done.
   */
  marksSettled?: readonly string[];
}

/** A batch as held work: the claim and hold a read and the sweep settle it by. */
export const heldBatch = (record: OwnedRecord): HeldWork => ({
  scope: 'batch',
  tenant: record.tenant,
  keyId: record.keyId,
  claim: record,
  noun: 'batch',
});

/** The charge that settles `work` at `costUsd` (0 releases its hold). */
export function settlementCharge(
  work: HeldWork,
  budget: BudgetLimit,
  costUsd: number,
): ChargeRequest & { id: string } {
  return {
    tenant: work.tenant,
    keyId: work.keyId,
    budget,
    amountUsd: costUsd,
    id: heldWorkId(work.scope, work.tenant, work.claim.id),
    rememberMs: SETTLED_MEMORY_MS,
  };
}

/**
 * After the work was created upstream, before the request settles: the request's reservation
 * (the work's worst case) becomes the work's own hold. A store that cannot take it leaves the
 * work created (hiding it behind a 5xx would invite a retry that starts it twice) but not held
 * beyond the request; that is logged and counted.
 */
export async function retainHold(
  deps: PipelineDeps,
  ctx: RequestContext,
  scope: HeldScope,
  id: string,
): Promise<void> {
  const reservation = ctx.admission?.reservation;
  if (!reservation || reservation.amountUsd <= 0) return;
  const holdId = heldWorkId(scope, ctx.tenant.name, id);
  try {
    await deps.stores.budgets.retain(reservation, holdId, HOLD_TTL_MS[scope]);
  } catch (err) {
    deps.metrics.accountingFailures.inc({ operation: 'budget.retain' });
    ctx.log.error(
      { hold: holdId, err: String(err) },
      "created, but its worst case could not be held: it does not count against the key's budget until it is charged",
    );
  }
}

const unavailable = (store: string, work: HeldWork, cause: unknown): GatewayError =>
  new GatewayError(
    'service_unavailable',
    `the ${store} is unavailable, so the finished ${work.noun} could not be settled; retry the read`,
    { cause, headers: { 'retry-after': '1' } },
  );

/** The claim mark a $0 release takes before its settlement claim (see `releaseAtNothing`). */
export const RELEASE_MARK = 'released';

/**
 * Settles finished work seen by a read: charges `costUsd` to the key's budget (past the limit
 * if need be: the work was done), which drops its hold in the same step, then takes the claim
 * that makes it settled for every pod. The charge comes first and is idempotent by the work's
 * id, so a store failing between the two leaves the work to the next read or the sweep without
 * losing or doubling the money. True when this call reports the cost (its read records usage);
 * false when another read, the sweep or a release settled it. Work settled under one of its
 * `alsoSettledAs` ids is settled here at nothing, in the same `claimed` look-up, read or sweep
 * alike: its hold is released and its own claim taken, so nothing charges it again. A store
 * that cannot be reached is a 503 naming it.
 *
 * Who reports must be whoever's charge the budget kept, also when a $0 release races it
 * (`reports`); only a release leaves `RELEASE_MARK`, so the rare paths look it up, never the
 * common one (charge applied, claim taken).
 */
export async function chargeThenClaim(
  stores: Pick<Stores, 'budgets' | 'ownership'>,
  budget: BudgetLimit | undefined,
  work: HeldWork,
  costUsd: number,
): Promise<boolean> {
  const guard = guarded(work);
  const owned = stores.ownership;
  const settledElsewhere = await unsettledYet(stores, work, guard);
  if (settledElsewhere === undefined) return false;
  const due = settledElsewhere ? 0 : costUsd;
  // Without a budget nothing is charged, so the claim alone says who reports.
  const applied = budget
    ? (await guard('budget store', stores.budgets.charge(settlementCharge(work, budget, due)))).applied
    : undefined;
  const took = await guard('ownership store', owned.claim(work.tenant, work.scope, work.claim, 'settled'));
  if (took && !settledElsewhere) await markSettled(stores, work);
  if (settledElsewhere) return false;
  const released =
    applied === undefined || took === applied
      ? false
      : (
          await guard('ownership store', owned.claimed(work.tenant, work.scope, [work.claim], RELEASE_MARK))
        )[0]!;
  return reports(took, applied, released);
}

/**
 * Pure: whether a settlement reports its cost, from whether it took the claim, whether the
 * budget kept its charge (undefined: no budget, nothing charged) and whether a $0 release marked
 * the work. Two settlements at the real cost: the claim's taker reports (one whose charge a pod
 * dying before its claim left behind included). A release among them: whoever's charge was kept.
 */
export function reports(took: boolean, applied: boolean | undefined, released: boolean): boolean {
  if (applied === undefined) return took;
  return took ? applied || !released : applied && released;
}

/**
 * Releases held work's hold at $0 (gone for good, or the platform admin's release) unless it
 * was settled already. The claim first, then the charge of nothing: a pod dying between them
 * leaves the hold to its TTL, never a finish uncharged and its hold gone while a read still
 * records it. The mark before the claim tells a read racing it that the claim's taker was a
 * release (`reports`). True when this call released the hold: it took the claim and its $0
 * charge was the one the budget kept (not a real settlement's landing first).
 */
export async function releaseAtNothing(
  stores: Pick<Stores, 'budgets' | 'ownership'>,
  budget: BudgetLimit | undefined,
  work: HeldWork,
): Promise<boolean> {
  const guard = guarded(work);
  const owned = stores.ownership;
  const settledElsewhere = await unsettledYet(stores, work, guard);
  if (settledElsewhere === undefined) return false;
  await guard('ownership store', owned.claim(work.tenant, work.scope, work.claim, RELEASE_MARK));
  if (!(await guard('ownership store', owned.claim(work.tenant, work.scope, work.claim, 'settled'))))
    return false;
  if (!settledElsewhere) await markSettled(stores, work);
  const applied = budget
    ? (await guard('budget store', stores.budgets.charge(settlementCharge(work, budget, 0)))).applied
    : true;
  return applied && !settledElsewhere;
}

type Guard = <T>(store: string, p: Promise<T>) => Promise<T>;

const guarded =
  (work: HeldWork): Guard =>
  (store, p) =>
    p.catch((err: unknown) => {
      throw isStoreUnavailable(err) ? unavailable(store, work, err) : err;
    });

/** Undefined when the work is settled already; else whether it was under another of its ids. */
async function unsettledYet(
  stores: Pick<Stores, 'ownership'>,
  work: HeldWork,
  guard: Guard,
): Promise<boolean | undefined> {
  const others = (work.alsoSettledAs ?? []).map((id) => ({ ...work.claim, id }));
  const [done, ...elsewhere] = await guard(
    'ownership store',
    stores.ownership.claimed(work.tenant, work.scope, [work.claim, ...others], 'settled'),
  );
  return done ? undefined : elsewhere.some(Boolean);
}

/** Best effort: this id's claim already holds; a failure only leaves the narrower case open. */
async function markSettled(stores: Pick<Stores, 'ownership'>, work: HeldWork): Promise<void> {
  await Promise.all(
    (work.marksSettled ?? []).map((id) =>
      stores.ownership.claim(work.tenant, work.scope, { ...work.claim, id }, 'settled').catch(() => false),
    ),
  );
}

/** Whether held work created at `createdAtMs` has outlived its hold (so a sweep may stop looking). */
export const pastHold = (scope: HeldScope, createdAtMs: number, now: number): boolean =>
  now > createdAtMs + HOLD_TTL_MS[scope];
