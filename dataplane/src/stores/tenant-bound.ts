/**
 * Fair bounds for an in-process store shared by tenants. One global bound alone lets one
 * tenant's traffic push every other tenant's entries out; here
 *   - each tenant has its own cap (entries and bytes): past it, its own oldest entry goes;
 *   - past the global cap, the oldest entry of the LARGEST tenant goes — a tenant at or below
 *     its fair share is never evicted while another holds more.
 * The store calls `added`/`removed` as it writes and deletes, and removes what `added`
 * returns. Bookkeeping only: no timers, no I/O.
 */

export interface TenantBoundLimits {
  maxEntries: number;
  maxBytes: number;
  /** Per-tenant caps; default to the global ones (then only largest-first fairness applies). */
  maxEntriesPerTenant?: number;
  maxBytesPerTenant?: number;
}

export interface Victim {
  tenant: string;
  key: string;
}

export interface TenantUsage {
  entries: number;
  bytes: number;
}

interface Bucket {
  /** Key → bytes, oldest write first. */
  order: Map<string, number>;
  bytes: number;
}

export class TenantBound {
  private readonly tenants = new Map<string, Bucket>();
  private entries = 0;
  private bytes = 0;
  private readonly maxEntries: number;
  private readonly maxBytes: number;
  private readonly maxEntriesPerTenant: number;
  private readonly maxBytesPerTenant: number;

  constructor(limits: TenantBoundLimits) {
    this.maxEntries = limits.maxEntries;
    this.maxBytes = limits.maxBytes;
    this.maxEntriesPerTenant = Math.min(limits.maxEntriesPerTenant ?? limits.maxEntries, limits.maxEntries);
    this.maxBytesPerTenant = Math.min(limits.maxBytesPerTenant ?? limits.maxBytes, limits.maxBytes);
  }

  /**
   * Records a write (a rewrite of the same key counts as the newest) and returns what must go
   * to stay within the bounds, oldest first. The entry just written is never a victim.
   */
  added(tenant: string, key: string, bytes: number): Victim[] {
    this.removed(tenant, key);
    let b = this.tenants.get(tenant);
    if (!b) this.tenants.set(tenant, (b = { order: new Map(), bytes: 0 }));
    b.order.set(key, bytes);
    b.bytes += bytes;
    this.entries++;
    this.bytes += bytes;

    const victims: Victim[] = [];
    const evictOldest = (t: string, bucket: Bucket): boolean => {
      for (const k of bucket.order.keys()) {
        if (t === tenant && k === key) continue;
        victims.push({ tenant: t, key: k });
        this.removed(t, k);
        return true;
      }
      return false;
    };
    while (b.order.size > this.maxEntriesPerTenant || b.bytes > this.maxBytesPerTenant)
      if (!evictOldest(tenant, b)) break;
    while (this.entries > this.maxEntries || this.bytes > this.maxBytes) {
      const byBytes = this.bytes > this.maxBytes;
      const largest = this.largest(byBytes);
      if (!largest || !evictOldest(largest[0], largest[1])) break;
    }
    return victims;
  }

  /** Forgets a key (deleted, expired, flushed); unknown keys are ignored. */
  removed(tenant: string, key: string): void {
    const b = this.tenants.get(tenant);
    const bytes = b?.order.get(key);
    if (!b || bytes === undefined) return;
    b.order.delete(key);
    b.bytes -= bytes;
    this.entries--;
    this.bytes -= bytes;
    if (b.order.size === 0) this.tenants.delete(tenant);
  }

  usage(tenant?: string): TenantUsage {
    if (tenant === undefined) return { entries: this.entries, bytes: this.bytes };
    const b = this.tenants.get(tenant);
    return { entries: b?.order.size ?? 0, bytes: b?.bytes ?? 0 };
  }

  /** The tenant holding the most (bytes or entries); ties go to the one seen first. */
  private largest(byBytes: boolean): [string, Bucket] | undefined {
    let best: [string, Bucket] | undefined;
    for (const entry of this.tenants) {
      const size = byBytes ? entry[1].bytes : entry[1].order.size;
      const bestSize = best ? (byBytes ? best[1].bytes : best[1].order.size) : -1;
      if (size > bestSize) best = entry;
    }
    return best;
  }
}
