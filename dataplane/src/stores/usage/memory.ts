/**
 * In-process usage store: the embedded default. Several store objects may share one state (as
 * pods share a Redis); every operation runs synchronously between awaits, so a record is
 * applied whole, like the Redis script.
 */
import type {
  RollupRow,
  SecurityRow,
  UsageDimensions,
  UsageQuery,
  UsageRecord,
  UsageStore,
} from '../../accounting/usage.ts';
import { systemClock, type Clock } from '../types.ts';
import {
  accumulate,
  cellMember,
  cellOf,
  dayFromEpochDay,
  dayOf,
  emptyCounters,
  epochDay,
  matchesFilters,
  parseCellMember,
  securityDeltas,
  securityField,
  parseSecurityField,
  toRollupRow,
  type RollupCounters,
} from './accumulate.ts';
import { resolveUsageOptions, type ResolvedUsageOptions, type UsageStoreOptions } from './options.ts';
import { byNewest, compareRows, compareSecurity, inRange } from './order.ts';

interface TenantUsage {
  /** day → cell member → counters */
  days: Map<string, Map<string, RollupCounters>>;
  /** day → security field → counts */
  security: Map<string, Map<string, { count: number; findings: number }>>;
  keys: Set<string>;
  models: Set<string>;
  providers: Set<string>;
  /** Oldest first; trimmed to the log limit in batches. */
  log: UsageRecord[];
}

/**
 * In process a write cannot be lost, so only an immediate retry of the same record needs
 * catching: remember the newest ids by count, not by time, so busy traffic cannot grow it.
 */
const MEMORY_DEDUPE_MS = 10 * 60_000;
const MEMORY_DEDUPE_MAX = 10_000;

export class MemoryUsageState {
  readonly tenants = new Map<string, TenantUsage>();
  /** `[tenant, id]` → when it may be forgotten. */
  private readonly seen = new Map<string, number>();
  /**
   * The same entries oldest first, as a queue: the oldest is found without iterating the map,
   * whose iterator walks past every entry deleted since its last rehash (thousands once
   * full, on every record).
   */
  private readonly order: { id: string; until: number }[] = [];
  private head = 0;

  hasSeen(id: string): boolean {
    return this.seen.has(id);
  }

  /** Remember `id` until `until`; past `max` entries the oldest is forgotten early. */
  remember(id: string, until: number, max: number): void {
    this.seen.set(id, until);
    this.order.push({ id, until });
    if (this.seen.size > max) this.forgetOldest();
  }

  /** Forget every entry due by `now` (entries are remembered in time order). */
  forgetDue(now: number): void {
    while (this.head < this.order.length && this.order[this.head]!.until <= now) this.forgetOldest();
  }

  private forgetOldest(): void {
    const e = this.order[this.head++]!;
    // Only the entry this slot stands for: an id seen again later has a newer slot of its own.
    if (this.seen.get(e.id) === e.until) this.seen.delete(e.id);
    // Compact now and then: amortised O(1), and the queue never holds more than twice the map.
    if (this.head >= 1024 && this.head * 2 >= this.order.length) {
      this.order.splice(0, this.head);
      this.head = 0;
    }
  }

  tenant(name: string): TenantUsage {
    let t = this.tenants.get(name);
    if (!t) {
      t = {
        days: new Map(),
        security: new Map(),
        keys: new Set(),
        models: new Set(),
        providers: new Set(),
        log: [],
      };
      this.tenants.set(name, t);
    }
    return t;
  }
}

export class MemoryUsageStore implements UsageStore {
  private readonly opts: ResolvedUsageOptions;

  constructor(
    private readonly state: MemoryUsageState = new MemoryUsageState(),
    opts: UsageStoreOptions = {},
    private readonly clock: Clock = systemClock,
  ) {
    this.opts = resolveUsageOptions(opts);
  }

  async record(r: UsageRecord): Promise<boolean> {
    const now = this.clock();
    this.state.forgetDue(now);
    const seenId = `${r.tenant}\u0000${r.id}`;
    if (this.state.hasSeen(seenId)) return false;
    // Validate before any write, so a bad record changes nothing (the script does the same).
    const cell = cellOf(r);
    const security = securityDeltas(r);
    // A copy: the caller's object must not change what the log holds.
    const entry: UsageRecord = { ...r };
    const member = cellMember(cell);
    const next = accumulate(this.cell(cell.tenant, cell.day, member), r);

    this.state.remember(seenId, now + Math.min(this.opts.dedupeMs, MEMORY_DEDUPE_MS), MEMORY_DEDUPE_MAX);
    const t = this.state.tenant(r.tenant);
    const isNewDay = !t.days.has(cell.day);
    this.cells(t, cell.day).set(member, next);
    if (security.length > 0) {
      const day = t.security.get(cell.day) ?? new Map<string, { count: number; findings: number }>();
      t.security.set(cell.day, day);
      for (const d of security) {
        const field = securityField(d);
        const c = day.get(field) ?? { count: 0, findings: 0 };
        day.set(field, { count: c.count + d.count, findings: c.findings + d.findings });
      }
    }
    t.keys.add(cell.keyId);
    t.models.add(cell.model);
    if (cell.provider !== '') t.providers.add(cell.provider);
    t.log.push(entry);
    // Trim in batches: amortised O(1) per record; reads only look at the newest `logLimit`.
    if (t.log.length > this.opts.logLimit + Math.ceil(this.opts.logLimit / 8))
      t.log.splice(0, t.log.length - this.opts.logLimit);
    if (isNewDay) this.expireDays(t, now);
    return true;
  }

  private cells(t: TenantUsage, day: string): Map<string, RollupCounters> {
    let cells = t.days.get(day);
    if (!cells) {
      cells = new Map();
      t.days.set(day, cells);
    }
    return cells;
  }

  private cell(tenant: string, day: string, member: string): RollupCounters {
    return this.state.tenants.get(tenant)?.days.get(day)?.get(member) ?? emptyCounters();
  }

  private expireDays(t: TenantUsage, now: number): void {
    const oldest = dayFromEpochDay(epochDay(dayOf(now)) - this.opts.retentionDays);
    for (const day of t.days.keys()) if (day < oldest) t.days.delete(day);
    for (const day of t.security.keys()) if (day < oldest) t.security.delete(day);
  }

  private scope(tenant: string | undefined): [string, TenantUsage][] {
    if (tenant !== undefined) {
      const t = this.state.tenants.get(tenant);
      return t ? [[tenant, t]] : [];
    }
    return [...this.state.tenants.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }

  async rollups(q: UsageQuery): Promise<RollupRow[]> {
    const rows: RollupRow[] = [];
    for (const [tenant, t] of this.scope(q.tenant)) {
      for (const [day, cells] of t.days) {
        if (!inRange(day, q)) continue;
        for (const [member, counters] of cells) {
          const dims = parseCellMember(member);
          if (matchesFilters(q, dims)) rows.push(toRollupRow({ day, tenant, ...dims }, counters));
        }
      }
    }
    return rows.sort(compareRows);
  }

  async logs(q: UsageQuery & { limit: number }): Promise<UsageRecord[]> {
    const out: UsageRecord[] = [];
    for (const [, t] of this.scope(q.tenant)) {
      let found = 0;
      const floor = Math.max(0, t.log.length - this.opts.logLimit);
      for (let i = t.log.length - 1; i >= floor && found < q.limit; i--) {
        const r = t.log[i]!;
        if (!inRange(dayOf(r.at), q) || !matchesFilters(q, cellOf(r))) continue;
        out.push(r);
        found++;
      }
    }
    return byNewest(out).slice(0, Math.max(0, q.limit));
  }

  async security(q: UsageQuery): Promise<SecurityRow[]> {
    const rows: SecurityRow[] = [];
    for (const [tenant, t] of this.scope(q.tenant)) {
      for (const [day, fields] of t.security) {
        if (!inRange(day, q)) continue;
        for (const [field, c] of fields) rows.push({ tenant, day, ...parseSecurityField(field), ...c });
      }
    }
    return rows.sort(compareSecurity);
  }

  async dimensions(tenant: string): Promise<UsageDimensions> {
    const t = this.state.tenants.get(tenant);
    const sorted = (s: Set<string> | undefined) => [...(s ?? [])].sort();
    return { keys: sorted(t?.keys), models: sorted(t?.models), providers: sorted(t?.providers) };
  }

  async tenants(): Promise<string[]> {
    return [...this.state.tenants.keys()].sort();
  }
}
