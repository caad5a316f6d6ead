/**
 * Who owns the objects OpenAI-style APIs keep upstream (files, batches, vector stores,
 * assistants, containers). The upstream holds the object; Gantry records, for every id it
 * handed out, the tenant and key that created it and the deployment that holds it. Lookups
 * are made under the caller's tenant, so another tenant's id is simply not there; the key is
 * checked by the caller of the store (`ownedBy`).
 */

export const FAMILIES = [
  'file',
  'batch',
  'vector_store',
  'assistant',
  'container',
  'fine_tuning_job',
] as const;
export type Family = (typeof FAMILIES)[number];
/**
 * What once-only claims are made on. Fine-tuning jobs are owned upstream (through metadata);
 * their records only keep a budgeted job's worst case until a read settles it.
 */
export type ClaimScope = Family;

export interface Owner {
  tenant: string;
  /** The ApiKey's id (namespace/name): stays the same when the key's secret is rotated. */
  keyId: string;
}

export interface OwnedRecord extends Owner {
  family: Family;
  /** The upstream's id, shown to the caller unchanged so references inside bodies keep working. */
  id: string;
  /** The ModelDeployment that holds the object, and the model it serves. */
  deployment: string;
  model: string;
  /** Milliseconds since the epoch. */
  createdAt: number;
  /** When the upstream object expires (ms), if it says so; the record goes with it. */
  expiresAt?: number | undefined;
  /** Files: the purpose they were uploaded for (lists filter on it, batches need `batch`). */
  purpose?: string | undefined;
  /**
   * For keys with a budget, the most the batch can cost: on a batch input file, computed at
   * upload; on a batch, copied from its file at creation; on a fine-tuning job, its hold at
   * creation. The hold itself is in the budget store (pipeline/resources/held-work.ts); this
   * copy lets a create's 402 name what the key's unsettled ones hold (`outstandingOf`).
   */
  estimateUsd?: number | undefined;
  /**
   * For keys with a budget, a `fine-tune` file's tokens (one pass over it), counted at upload:
   * a fine-tuning job on it holds these times its epochs at the training price.
   */
  trainingTokens?: number | undefined;
  /**
   * The upstream 404s seen on the object since it was last found (pipeline/resources/gone.ts):
   * when the first was seen, and how many were counted. Absent while it is found.
   */
  first404At?: number | undefined;
  count404?: number | undefined;
}

/** What a once-only claim is made on. */
export interface Claimable {
  id: string;
  /**
   * When the object was created (ms), the same value on every claim of it: a store that evicts
   * claims refuses every object created no later than the newest one whose claim it evicted.
   */
  createdAt: number;
}

export interface OwnershipStore {
  /** Record (or overwrite) an object's owner. */
  put(record: OwnedRecord): Promise<void>;
  /** The record of `id` within the tenant, whichever of its keys owns it. */
  get(tenant: string, family: Family, id: string): Promise<OwnedRecord | undefined>;
  delete(record: Pick<OwnedRecord, 'tenant' | 'keyId' | 'family' | 'id'>): Promise<void>;
  /**
   * Rewrites the record of `id` as `change` makes it from the record as stored, atomically
   * against every other write (another request's, another pod's): a record deleted meanwhile is
   * not written back. Its expiry is kept; `null` from `change` deletes it. Returns what is
   * stored afterwards: the record, `null` once deleted, `undefined` when there was none.
   */
  amend(
    tenant: string,
    family: Family,
    id: string,
    change: (record: OwnedRecord) => OwnedRecord | null,
  ): Promise<OwnedRecord | null | undefined>;
  /** The owner's records of one family, newest first, at most `MAX_LISTED_PER_OWNER`. */
  list(owner: Owner, family: Family): Promise<OwnedRecord[]>;
  /**
   * True the first time it is asked for (tenant, scope, object id, mark), false ever after:
   * once-only actions. Fails closed: a store that had to forget claims answers false for any
   * object that might have been among them (see `Claimable.createdAt`), never true twice.
   */
  claim(tenant: string, scope: ClaimScope, object: Claimable, mark: string): Promise<boolean>;
  /** Which of `objects` a `claim` would refuse (claimed, or possibly forgotten), without claiming any. */
  claimed(tenant: string, scope: ClaimScope, objects: readonly Claimable[], mark: string): Promise<boolean[]>;
  /**
   * A settlement sweep's queue, across tenants: records of `family` (batches; fine-tuning
   * jobs, whose records exist only while they hold a worst case) not yet seen finished, least
   * recently looked at first, at most `limit`. A record enters its queue when it is `put`.
   * The records taken are leased in the same atomic step for `SWEEP_LEASE_MS`: a sweep on
   * another pod meanwhile takes the next ones, so pods split the queue instead of all reading
   * its head. `swept` ends the lease; a pod that dies mid-tick leaves its records to the next
   * sweep once their lease runs out.
   */
  unsettled(limit: number, family?: SweptFamily): Promise<OwnedRecord[]>;
  /** The sweep looked at a record: a finished (or vanished) one leaves the queue, any other goes to its back, free to take. */
  swept(record: Pick<OwnedRecord, 'tenant' | 'id' | 'family'>, finished: boolean): Promise<void>;
}

/** Families whose records queue for a settlement sweep: work that holds budget until it settles. */
export const SWEPT_FAMILIES = ['batch', 'fine_tuning_job'] as const satisfies readonly Family[];
export type SweptFamily = (typeof SWEPT_FAMILIES)[number];

export const isSwept = (family: Family): family is SweptFamily =>
  (SWEPT_FAMILIES as readonly Family[]).includes(family);

/**
 * How long a sweep's records are its own (`unsettled`): a tick takes no more at once than it
 * can read in this time (`PER_LEASE` in pipeline/resources/sweep.ts); a pod dying mid-tick may
 * see another pod read some again, which their claims make harmless.
 */
export const SWEEP_LEASE_MS = 5 * 60_000;

/** Each sweep queue keeps this many records (the oldest queued first out); older ones settle when read. */
export const MAX_UNSETTLED_BATCHES = 100_000;

/** A record without an upstream expiry is forgotten a year after it was written. */
export const OWNED_MAX_AGE_MS = 365 * 24 * 60 * 60 * 1000;
/** Lists show the newest this many objects per key and family; older ones stay reachable by id. */
export const MAX_LISTED_PER_OWNER = 10_000;

/** Until when a record is kept: its upstream expiry, within the ceiling. */
export function keptUntil(record: Pick<OwnedRecord, 'expiresAt'>, now: number): number {
  const ceiling = now + OWNED_MAX_AGE_MS;
  return record.expiresAt === undefined ? ceiling : Math.min(record.expiresAt, ceiling);
}

/** The record when `owner` (same tenant and same key) owns it; anyone else sees nothing. */
export function ownedBy(record: OwnedRecord | undefined, owner: Owner): OwnedRecord | undefined {
  return record && record.tenant === owner.tenant && record.keyId === owner.keyId ? record : undefined;
}
