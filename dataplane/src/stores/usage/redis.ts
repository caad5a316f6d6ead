/**
 * Redis usage store, shared by every pod. Recording is one round trip: the record script
 * (dedupe + rollup + indexes + log + security counters, atomic) pipelined with the SADD of the
 * global tenant index. Queries walk the small indexes (days with data, cells of a day) in a few
 * pipelined round trips; nothing is scanned.
 */
import type { ChainableCommander, Redis } from 'ioredis';
import type {
  RollupRow,
  SecurityRow,
  UsageDimensions,
  UsageQuery,
  UsageRecord,
  UsageStore,
} from '../../accounting/usage.ts';
import { toStoreError } from '../redis/client.ts';
import type { KeySpace } from '../redis/keys.ts';
import { arg, int, type ScriptArg } from '../redis/script.ts';
import { systemClock, type Clock } from '../types.ts';
import {
  COUNTER_FIELDS,
  cellMember,
  cellOf,
  dayOf,
  deltas,
  emptyCounters,
  epochDay,
  logEntry,
  matchesFilters,
  parseCellMember,
  parseLogEntry,
  parseSecurityField,
  securityDeltas,
  securityField,
  toRollupRow,
  type RollupCounters,
} from './accumulate.ts';
import { UsageKeys } from './keys.ts';
import { usageRecord } from './lua.ts';
import { resolveUsageOptions, type ResolvedUsageOptions, type UsageStoreOptions } from './options.ts';
import { byNewest, compareRows, compareSecurity } from './order.ts';

/** Log entries read per LRANGE while looking for filtered matches. */
const LOG_CHUNK = 1000;

type PipelineResult = [Error | null, unknown][];
type ScriptCommand = (...args: ScriptArg[]) => ChainableCommander;

/** One usage record as the record script's keys and arguments. */
export interface UsageRecordCall {
  keys: string[];
  args: ScriptArg[];
  tenant: string;
  /** The global index of tenants with usage (outside the tenant's slot: its own command). */
  tenantsKey: string;
}

export class RedisUsageStore implements UsageStore {
  private readonly keys: UsageKeys;
  private readonly opts: ResolvedUsageOptions;
  private readonly dedupeArg: string;
  private readonly retentionArg: string;
  private readonly logLimitArg: string;

  constructor(
    private readonly client: Redis,
    space: KeySpace,
    opts: UsageStoreOptions = {},
    private readonly clock: Clock = systemClock,
  ) {
    this.keys = new UsageKeys(space);
    this.opts = resolveUsageOptions(opts);
    this.dedupeArg = arg(this.opts.dedupeMs);
    this.retentionArg = arg(this.opts.retentionDays * 86_400);
    this.logLimitArg = arg(this.opts.logLimit);
    client.defineCommand(usageRecord.name, { numberOfKeys: usageRecord.numberOfKeys, lua: usageRecord.lua });
  }

  /** Runs a pipeline; a connection problem becomes StoreUnavailableError, as does a failed command. */
  private async exec(operation: string, build: (p: ChainableCommander) => void): Promise<unknown[]> {
    const p = this.client.pipeline();
    build(p);
    let results: PipelineResult | null;
    try {
      results = await p.exec();
    } catch (err) {
      throw toStoreError(operation, err);
    }
    if (!results) throw toStoreError(operation, new Error('pipeline discarded'));
    return results.map(([err, value]) => {
      if (err) throw toStoreError(operation, err);
      return value;
    });
  }

  async record(r: UsageRecord): Promise<boolean> {
    const call = this.recordCall(r);
    const [applied] = await this.exec('usage.record', (p) => {
      const script = (p as unknown as Record<string, ScriptCommand>)[usageRecord.name];
      if (!script) throw new Error(`defineCommand did not install ${usageRecord.name}`);
      script.call(p, ...call.keys, ...call.args);
      p.sadd(call.tenantsKey, call.tenant);
    });
    return int(applied, 'usage.record') === 1;
  }

  /** The record script's keys and arguments for `r`, and the global tenant index to add it to. */
  recordCall(r: UsageRecord): UsageRecordCall {
    const cell = cellOf(r);
    const member = cellMember(cell);
    const today = epochDay(dayOf(this.clock()));
    const counters = deltas(r);
    // The script takes `requests` (always 1) coming back as 1 to mean a new cell.
    if (counters[0]?.[0] !== 'requests' || counters[0][1] !== 1)
      throw new Error('usage record: the first counter must be requests = 1');
    const security = securityDeltas(r).flatMap((d) => {
      const field = securityField(d);
      return [
        [`r:${field}`, d.count],
        [`f:${field}`, d.findings],
      ] as const;
    });
    const t = r.tenant;
    const keys = [
      this.keys.seen(t, r.id),
      this.keys.cell(t, cell.day, member),
      this.keys.cells(t, cell.day),
      this.keys.days(t),
      this.keys.index(t, 'keys'),
      this.keys.index(t, 'models'),
      this.keys.index(t, 'providers'),
      this.keys.log(t),
      this.keys.security(t, cell.day),
    ];
    const args: ScriptArg[] = [
      this.dedupeArg,
      this.retentionArg,
      member,
      cell.day,
      arg(epochDay(cell.day)),
      arg(today - this.opts.retentionDays),
      cell.keyId,
      cell.model,
      cell.provider,
      logEntry(r),
      this.logLimitArg,
      arg(counters.length),
    ];
    for (const [f, v] of counters) args.push(f, arg(v));
    args.push(arg(security.length));
    for (const [f, v] of security) args.push(f, arg(v));
    return { keys, args, tenant: t, tenantsKey: this.keys.tenants() };
  }

  private async scope(tenant: string | undefined): Promise<string[]> {
    return tenant !== undefined ? [tenant] : this.tenants();
  }

  /** Days with data per tenant inside the range (one round trip for all tenants). */
  private async daysIn(operation: string, tenants: string[], q: UsageQuery): Promise<[string, string][]> {
    if (tenants.length === 0) return [];
    const replies = await this.exec(operation, (p) => {
      for (const t of tenants) p.zrangebyscore(this.keys.days(t), epochDay(q.from), epochDay(q.to));
    });
    return tenants.flatMap((t, i) => (replies[i] as string[]).map((day): [string, string] => [t, day]));
  }

  async rollups(q: UsageQuery): Promise<RollupRow[]> {
    const op = 'usage.rollups';
    const days = await this.daysIn(op, await this.scope(q.tenant), q);
    if (days.length === 0) return [];
    const members = await this.exec(op, (p) => {
      for (const [t, day] of days) p.smembers(this.keys.cells(t, day));
    });
    const cells = days.flatMap(([tenant, day], i) =>
      (members[i] as string[])
        .map((m) => ({ member: m, dims: { day, tenant, ...parseCellMember(m) } }))
        .filter((c) => matchesFilters(q, c.dims)),
    );
    if (cells.length === 0) return [];
    const hashes = await this.exec(op, (p) => {
      for (const c of cells) p.hgetall(this.keys.cell(c.dims.tenant, c.dims.day, c.member));
    });
    const rows: RollupRow[] = [];
    cells.forEach((c, i) => {
      const h = hashes[i] as Record<string, string>;
      // The cell expired between the index read and this one: nothing to report.
      if (Object.keys(h).length === 0) return;
      const counters: RollupCounters = emptyCounters();
      for (const f of COUNTER_FIELDS) counters[f] = Number(h[f] ?? 0);
      rows.push(toRollupRow(c.dims, counters));
    });
    return rows.sort(compareRows);
  }

  async logs(q: UsageQuery & { limit: number }): Promise<UsageRecord[]> {
    const out: UsageRecord[] = [];
    if (q.limit <= 0) return out;
    for (const t of await this.scope(q.tenant)) {
      let found = 0;
      for (let start = 0; start < this.opts.logLimit && found < q.limit; start += LOG_CHUNK) {
        const stop = Math.min(start + LOG_CHUNK, this.opts.logLimit) - 1;
        const [chunk] = await this.exec('usage.logs', (p) => p.lrange(this.keys.log(t), start, stop));
        const entries = chunk as string[];
        for (const raw of entries) {
          const r = parseLogEntry(raw);
          if (!r || found >= q.limit) continue;
          const day = dayOf(r.at);
          if (day < q.from || day > q.to || !matchesFilters(q, cellOf(r))) continue;
          out.push(r);
          found++;
        }
        if (entries.length < stop - start + 1) break;
      }
    }
    return byNewest(out).slice(0, q.limit);
  }

  async security(q: UsageQuery): Promise<SecurityRow[]> {
    const op = 'usage.security';
    const days = await this.daysIn(op, await this.scope(q.tenant), q);
    if (days.length === 0) return [];
    const hashes = await this.exec(op, (p) => {
      for (const [t, day] of days) p.hgetall(this.keys.security(t, day));
    });
    const rows = new Map<string, SecurityRow>();
    days.forEach(([tenant, day], i) => {
      for (const [field, value] of Object.entries(hashes[i] as Record<string, string>)) {
        const kind = field.slice(0, 2);
        if (kind !== 'r:' && kind !== 'f:') continue;
        const name = field.slice(2);
        const id = `${tenant}\n${day}\n${name}`;
        const row = rows.get(id) ?? { tenant, day, ...parseSecurityField(name), count: 0, findings: 0 };
        if (kind === 'r:') row.count = Number(value);
        else row.findings = Number(value);
        rows.set(id, row);
      }
    });
    return [...rows.values()].sort(compareSecurity);
  }

  async dimensions(tenant: string): Promise<UsageDimensions> {
    const [keys, models, providers] = await this.exec('usage.dimensions', (p) => {
      p.smembers(this.keys.index(tenant, 'keys'));
      p.smembers(this.keys.index(tenant, 'models'));
      p.smembers(this.keys.index(tenant, 'providers'));
    });
    const sorted = (v: unknown) => [...(v as string[])].sort();
    return { keys: sorted(keys), models: sorted(models), providers: sorted(providers) };
  }

  async tenants(): Promise<string[]> {
    const [members] = await this.exec('usage.tenants', (p) => p.smembers(this.keys.tenants()));
    return [...(members as string[])].sort();
  }
}
