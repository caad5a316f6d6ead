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
import { IdWindow } from './id-window.ts';
import { byNewest, compareRows, compareSecurity, inRange } from './order.ts';
import { PackedUsageLog } from './packed-log.ts';

interface TenantUsage {
  /** day → cell member → counters */
  days: Map<string, Map<string, RollupCounters>>;
  /** day → security field → counts */
  security: Map<string, Map<string, { count: number; findings: number }>>;
  keys: Set<string>;
  models: Set<string>;
  providers: Set<string>;
  /** The newest records, packed (a record object each was most of this store's heap). */
  log: PackedUsageLog;
}

/**
 * In process a write cannot be lost, so only an immediate retry of the same record needs
 * catching: remember the newest ids by count, not by time, so busy traffic cannot grow it.
 */
const MEMORY_DEDUPE_MS = 10 * 60_000;
const MEMORY_DEDUPE_MAX = 10_000;

export class MemoryUsageState {
  readonly tenants = new Map<string, TenantUsage>();
  /** `[tenant, id]` of the records seen lately, oldest first (its ring grows on use). */
  private readonly seen = new IdWindow(MEMORY_DEDUPE_MAX);

  hasSeen(id: string): boolean {
    return this.seen.has(id);
  }

  /** Remember `id` until `until`; past MEMORY_DEDUPE_MAX entries the oldest is forgotten early. */
  remember(id: string, until: number): void {
    this.seen.remember(id, until);
  }

  /** Forget every entry due by `now` (entries are remembered in time order). */
  forgetDue(now: number): void {
    this.seen.forgetDue(now);
  }

  /** The tenant's state; a new tenant's log keeps its newest `logLimit` records. */
  tenant(name: string, logLimit: number): TenantUsage {
    let t = this.tenants.get(name);
    if (!t) {
      t = {
        days: new Map(),
        security: new Map(),
        keys: new Set(),
        models: new Set(),
        providers: new Set(),
        log: new PackedUsageLog(name, logLimit),
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
    const member = cellMember(cell);
    const next = accumulate(this.cell(cell.tenant, cell.day, member), r);

    this.state.remember(seenId, now + Math.min(this.opts.dedupeMs, MEMORY_DEDUPE_MS));
    const t = this.state.tenant(r.tenant, this.opts.logLimit);
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
    // Packed, so the caller's object is copied and never kept.
    t.log.push(r);
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
      const newest = Math.min(t.log.size, this.opts.logLimit);
      for (let age = 0; age < newest && found < q.limit; age++) {
        if (!inRange(dayOf(t.log.atMs(age)), q)) continue;
        const r = t.log.record(age);
        if (!matchesFilters(q, cellOf(r))) continue;
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
