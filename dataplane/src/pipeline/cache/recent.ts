/** The last per-request cache metrics of this pod, for `GET /api/v1/cache/metrics`. */
import type { Band } from './policy.ts';

export interface CacheMetricRecord {
  at: string;
  requestId: string;
  tenant: string;
  model: string;
  band: Band | 'SKIP';
  score: number | null;
  tokensSaved: number;
  /** Time the cache stage took (embedding, search, and a TWEAK's adaptation). */
  latencyMs: number;
  skipReason?: string | undefined;
  /** A hit of the exact tier: the same request again, served without embedding. */
  exact: boolean;
}

/** As pushed on the request path: the time as epoch ms, formatted only when read. */
export type RecentCacheLookup = Omit<CacheMetricRecord, 'at'> & { atMs: number };

export class RecentCacheMetrics {
  private readonly ring: RecentCacheLookup[] = [];
  private next = 0;

  constructor(private readonly capacity = 1000) {}

  push(r: RecentCacheLookup): void {
    if (this.ring.length < this.capacity) this.ring.push(r);
    else this.ring[this.next] = r;
    this.next = (this.next + 1) % this.capacity;
  }

  /** Newest first, optionally one tenant's only. */
  latest(limit: number, tenant?: string): CacheMetricRecord[] {
    const ordered = [...this.ring.slice(this.next), ...this.ring.slice(0, this.next)].reverse();
    return (tenant === undefined ? ordered : ordered.filter((r) => r.tenant === tenant))
      .slice(0, limit)
      .map(({ atMs, ...r }) => ({ at: new Date(atMs).toISOString(), ...r }));
  }
}
