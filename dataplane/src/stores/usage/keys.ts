/**
 * Usage key names, inside the tenant's `{tenant}` hash tag like every other store key, so the
 * record script's keys share one Redis Cluster slot. Only the index of tenants is global; it
 * is written by a separate command in the same pipeline (one round trip).
 */
import type { KeySpace } from '../redis/keys.ts';

const enc = encodeURIComponent;

export class UsageKeys {
  constructor(private readonly space: KeySpace) {}

  private base(tenant: string): string {
    return `${this.space.tenant(tenant)}:usage`;
  }

  /** Marker of a recorded request id (dedupe window). */
  seen(tenant: string, id: string): string {
    return `${this.base(tenant)}:seen:${enc(id)}`;
  }

  /** HASH of integer counters of one rollup cell; `member` is `cellMember(...)`. */
  cell(tenant: string, day: string, member: string): string {
    return `${this.base(tenant)}:r:${day}:${member}`;
  }

  /** SET of the cell members that have data on a day. */
  cells(tenant: string, day: string): string {
    return `${this.base(tenant)}:cells:${day}`;
  }

  /** ZSET of days with data (member `YYYY-MM-DD`, score = days since the epoch). */
  days(tenant: string): string {
    return `${this.base(tenant)}:days`;
  }

  /** SETs of the key ids, models and providers seen. */
  index(tenant: string, dimension: 'keys' | 'models' | 'providers'): string {
    return `${this.base(tenant)}:idx:${dimension}`;
  }

  /** LIST of request-log entries (JSON), newest first, capped. */
  log(tenant: string): string {
    return `${this.base(tenant)}:log`;
  }

  /** HASH of one day's security counters: `r:<field>` requests, `f:<field>` findings. */
  security(tenant: string, day: string): string {
    return `${this.base(tenant)}:sec:${day}`;
  }

  /** SET of tenants with usage (global). */
  tenants(): string {
    return `${this.space.prefix}:usage:tenants`;
  }
}
