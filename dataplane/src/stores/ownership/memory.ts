/**
 * In-process ownership records, bounded in age and in number, fairly between tenants
 * (TenantBound, as every in-process store): past the bound the largest tenant's oldest record
 * goes, and so do once-only claims. One tenant uploading files without pause therefore never
 * makes another tenant's files unreachable. An evicted claim raises a watermark (per tenant,
 * scope and mark) to its object's creation time, and no object created at or before it can be
 * claimed again: forgetting a claim may leave a job uncharged, never charge it twice.
 * One pod only: with several replicas the Redis store shares them.
 */
import { TenantBound } from '../tenant-bound.ts';
import { systemClock, type Clock } from '../types.ts';
import {
  keptUntil,
  MAX_LISTED_PER_OWNER,
  isSwept,
  MAX_UNSETTLED_BATCHES,
  SWEEP_LEASE_MS,
  SWEPT_FAMILIES,
  type Claimable,
  type ClaimScope,
  type Family,
  type Owner,
  type OwnedRecord,
  type OwnershipStore,
  type SweptFamily,
} from './types.ts';

export const DEFAULT_MAX_OWNED_RECORDS = 200_000;

const recordKey = (tenant: string, family: ClaimScope, id: string) => `${tenant}\u0000${family}\u0000${id}`;
const claimKey = (tenant: string, scope: ClaimScope, id: string, mark: string) =>
  `${recordKey(tenant, scope, id)}\u0000${mark}`;
const indexKey = (owner: Owner, family: Family) => `${owner.tenant}\u0000${owner.keyId}\u0000${family}`;

export class MemoryOwnershipStore implements OwnershipStore {
  private readonly records = new Map<string, { record: OwnedRecord; until: number }>();
  /** Per owner and family, ids in the order written (a Set keeps insertion order). */
  private readonly index = new Map<string, Set<string>>();
  /** Claim key → until when it holds, its object's creation time and its watermark's key. */
  private readonly claims = new Map<string, { until: number; createdAt: number; scope: string }>();
  /** Per tenant, scope and mark: the newest creation time among objects whose claims were evicted. */
  private readonly forgotten = new Map<string, number>();
  /** Per swept family, record keys awaiting the sweep, least recently looked at first (a Set keeps insertion order). */
  private readonly queues = new Map<SweptFamily, Set<string>>(
    SWEPT_FAMILIES.map((f) => [f, new Set<string>()]),
  );
  /** Queued record keys a sweep has taken, until when (`unsettled`'s lease); ended by `swept`. */
  private readonly leased = new Map<string, number>();
  /** Records are a few small strings each: counted, not sized. */
  private readonly recordBound: TenantBound;
  private readonly claimBound: TenantBound;

  constructor(
    private readonly clock: Clock = systemClock,
    maxRecords = DEFAULT_MAX_OWNED_RECORDS,
  ) {
    this.recordBound = new TenantBound({ maxEntries: maxRecords, maxBytes: Infinity });
    this.claimBound = new TenantBound({ maxEntries: maxRecords, maxBytes: Infinity });
  }

  async put(record: OwnedRecord): Promise<void> {
    const key = recordKey(record.tenant, record.family, record.id);
    this.drop(key);
    this.records.set(key, { record: { ...record }, until: keptUntil(record, this.clock()) });
    const ids = this.index.get(indexKey(record, record.family)) ?? new Set<string>();
    ids.add(record.id);
    this.index.set(indexKey(record, record.family), ids);
    if (ids.size > MAX_LISTED_PER_OWNER) ids.delete(ids.values().next().value!);
    const queue = isSwept(record.family) ? this.queues.get(record.family) : undefined;
    if (queue && !queue.has(key)) {
      queue.add(key);
      if (queue.size > MAX_UNSETTLED_BATCHES) {
        const oldest = queue.values().next().value!;
        queue.delete(oldest);
        this.leased.delete(oldest);
      }
    }
    for (const victim of this.recordBound.added(record.tenant, key, 0)) this.drop(victim.key);
  }

  async get(tenant: string, family: Family, id: string): Promise<OwnedRecord | undefined> {
    return this.live(recordKey(tenant, family, id));
  }

  async delete(record: Pick<OwnedRecord, 'tenant' | 'keyId' | 'family' | 'id'>): Promise<void> {
    this.drop(recordKey(record.tenant, record.family, record.id));
  }

  async amend(
    tenant: string,
    family: Family,
    id: string,
    change: (record: OwnedRecord) => OwnedRecord | null,
  ): Promise<OwnedRecord | null | undefined> {
    const key = recordKey(tenant, family, id);
    const current = this.live(key);
    if (!current) return undefined;
    const next = change(current);
    if (next === null) {
      this.drop(key);
      return null;
    }
    // In place: its expiry, place in the index and in the sweep's queue stay as they were.
    this.records.get(key)!.record = { ...next, tenant, family, id };
    return { ...next, tenant, family, id };
  }

  async list(owner: Owner, family: Family): Promise<OwnedRecord[]> {
    const ids = [...(this.index.get(indexKey(owner, family)) ?? [])].reverse();
    const out: OwnedRecord[] = [];
    for (const id of ids) {
      const r = this.live(recordKey(owner.tenant, family, id));
      if (r && r.keyId === owner.keyId) out.push(r);
    }
    return out;
  }

  async claim(tenant: string, scope: ClaimScope, object: Claimable, mark: string): Promise<boolean> {
    const now = this.clock();
    if (this.refuses(tenant, scope, object, mark, now)) return false;
    const key = claimKey(tenant, scope, object.id, mark);
    const watermark = `${tenant}\u0000${scope}\u0000${mark}`;
    this.claims.set(key, { until: keptUntil({}, now), createdAt: object.createdAt, scope: watermark });
    for (const victim of this.claimBound.added(tenant, key, 0)) {
      const lost = this.claims.get(victim.key);
      this.claims.delete(victim.key);
      if (!lost) continue;
      const before = this.forgotten.get(lost.scope);
      if (before === undefined || !(lost.createdAt <= before)) this.forgotten.set(lost.scope, lost.createdAt);
    }
    return true;
  }

  async claimed(
    tenant: string,
    scope: ClaimScope,
    objects: readonly Claimable[],
    mark: string,
  ): Promise<boolean[]> {
    const now = this.clock();
    return objects.map((o) => this.refuses(tenant, scope, o, mark, now));
  }

  /** Whether a claim must be refused: held, or possibly among the evicted ones. */
  private refuses(tenant: string, scope: ClaimScope, object: Claimable, mark: string, now: number): boolean {
    if ((this.claims.get(claimKey(tenant, scope, object.id, mark))?.until ?? 0) > now) return true;
    const watermark = this.forgotten.get(`${tenant}\u0000${scope}\u0000${mark}`);
    // Not `>`: a comparison with NaN (an unusable creation time) must refuse too.
    return watermark !== undefined && !(object.createdAt > watermark);
  }

  async unsettled(limit: number, family: SweptFamily = 'batch'): Promise<OwnedRecord[]> {
    const queue = this.queues.get(family)!;
    const now = this.clock();
    const out: OwnedRecord[] = [];
    for (const key of [...queue]) {
      if (out.length >= limit) break;
      if ((this.leased.get(key) ?? 0) > now) continue;
      const r = this.live(key);
      if (!r) {
        queue.delete(key);
        this.leased.delete(key);
        continue;
      }
      out.push(r);
      this.leased.set(key, now + SWEEP_LEASE_MS);
    }
    return out;
  }

  async swept(record: Pick<OwnedRecord, 'tenant' | 'id' | 'family'>, finished: boolean): Promise<void> {
    const queue = isSwept(record.family) ? this.queues.get(record.family) : undefined;
    const key = recordKey(record.tenant, record.family, record.id);
    this.leased.delete(key);
    if (!queue?.delete(key) || finished) return;
    queue.add(key);
  }

  private live(key: string): OwnedRecord | undefined {
    const hit = this.records.get(key);
    if (!hit) return undefined;
    if (hit.until <= this.clock()) {
      this.drop(key);
      return undefined;
    }
    return { ...hit.record };
  }

  private drop(key: string): void {
    const hit = this.records.get(key);
    if (!hit) return;
    this.records.delete(key);
    this.recordBound.removed(hit.record.tenant, key);
    const ids = this.index.get(indexKey(hit.record, hit.record.family));
    ids?.delete(hit.record.id);
    if (ids?.size === 0) this.index.delete(indexKey(hit.record, hit.record.family));
  }
}
