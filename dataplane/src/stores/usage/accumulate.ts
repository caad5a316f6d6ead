/**
 * What one usage record adds to its rollup cell and to the security counters. Pure, and the
 * only place that decides it: the in-process store applies `accumulate` directly, the Redis
 * store sends `accumulate(emptyCounters(), r)` as HINCRBY deltas to its script, so the two
 * cannot disagree. Money is integer micro-dollars here (exact sums); USD only in `toRollupRow`.
 */
import type { RollupRow, SecurityRow, UsageRecord } from '../../accounting/usage.ts';
import { fromMicros, toMicros } from '../money.ts';

/** The integer counters of a rollup cell, in the order they are written. */
export const COUNTER_FIELDS = [
  'requests',
  'errors',
  'euRequests',
  'nonEuRequests',
  'promptTokens',
  'completionTokens',
  'totalTokens',
  'costMicros',
  'latencyMsTotal',
  'cacheLookups',
  'cacheHits',
  'cacheDirect',
  'cacheReuse',
  'cacheTweak',
  'cacheSavedMicros',
  'cacheCreditedMicros',
  'cacheHitCostMicros',
  'tokensSaved',
  'guardrailBlocks',
  'guardrailFlags',
  'guardrailRedactions',
  'compressedRequests',
  'compressionOriginalTokens',
  'compressionSavedTokens',
  'compressionSavedMicros',
] as const;

export type CounterField = (typeof COUNTER_FIELDS)[number];
export type RollupCounters = Record<CounterField, number>;

/** The cell a record belongs to. */
export interface CellDims {
  day: string;
  tenant: string;
  keyId: string;
  model: string;
  provider: string;
}

export function emptyCounters(): RollupCounters {
  const c = {} as RollupCounters;
  for (const f of COUNTER_FIELDS) c[f] = 0;
  return c;
}

/** `YYYY-MM-DD` of an epoch-ms instant, UTC. */
let lastDay = { epochDay: Number.NaN, text: '' };

/** `YYYY-MM-DD` (UTC) of an epoch-ms time; the day's string is reused while the day lasts. */
export function dayOf(ms: number): string {
  const n = Math.floor(ms / 86_400_000);
  if (n !== lastDay.epochDay)
    lastDay = { epochDay: n, text: new Date(n * 86_400_000).toISOString().slice(0, 10) };
  return lastDay.text;
}

/** Days since the epoch of a `YYYY-MM-DD` (UTC): the score of a day in the Redis day index. */
export const epochDay = (day: string): number => Math.floor(Date.parse(`${day}T00:00:00Z`) / 86_400_000);

export const dayFromEpochDay = (n: number): string => dayOf(n * 86_400_000);

export function cellOf(r: UsageRecord): CellDims {
  return { day: dayOf(r.at), tenant: r.tenant, keyId: r.keyId, model: r.model, provider: r.provider ?? '' };
}

/** Token counts are whole and never negative; anything else in a record is a producer bug, not spend. */
const count = (n: number): number => (Number.isFinite(n) && n > 0 ? Math.round(n) : 0);
/** Charges round to the nearest µ$, like the budget store's settle, so spend and analytics agree. */
const micros = (usd: number): number => (Number.isFinite(usd) ? toMicros(usd) : 0);

const HIT_BANDS = { DIRECT: 'cacheDirect', REUSE: 'cacheReuse', TWEAK: 'cacheTweak' } as const;

/** `row` plus the record, as a new object. */
export function accumulate(row: Readonly<RollupCounters>, r: UsageRecord): RollupCounters {
  const next = { ...row };
  const cost = micros(r.costUsd);
  next.requests += 1;
  if (r.status >= 400) next.errors += 1;
  // Residency is a property of the deployment that served; an unserved request went nowhere.
  if (r.deployment !== undefined) {
    if (r.euResident) next.euRequests += 1;
    else next.nonEuRequests += 1;
  }
  next.promptTokens += count(r.promptTokens);
  next.completionTokens += count(r.completionTokens);
  next.totalTokens += count(r.totalTokens);
  next.costMicros += cost;
  next.latencyMsTotal += count(r.latencyMs);

  const cache = r.cache;
  if (cache && cache.band !== 'SKIP') {
    next.cacheLookups += 1;
    if (cache.band !== 'MISS') {
      next.cacheHits += 1;
      next[HIT_BANDS[cache.band]] += 1;
      next.cacheHitCostMicros += cost;
    }
    next.cacheSavedMicros += micros(cache.savedUsd);
    next.cacheCreditedMicros += micros(cache.creditedUsd);
    next.tokensSaved += count(cache.tokensSaved);
  }

  switch (r.guardrails?.action) {
    case 'block':
      next.guardrailBlocks += 1;
      break;
    case 'flag':
      next.guardrailFlags += 1;
      break;
    case 'redact':
      next.guardrailRedactions += 1;
      break;
  }

  const comp = r.compression;
  if (comp && comp.originalTokens > comp.tokens) {
    next.compressedRequests += 1;
    next.compressionOriginalTokens += count(comp.originalTokens);
    next.compressionSavedTokens += count(comp.originalTokens - comp.tokens);
    next.compressionSavedMicros += micros(comp.savedUsd);
  }
  return next;
}

/** The counters of one record, as `[field, delta]` pairs without zeros (the Redis script's HINCRBYs). */
export function deltas(r: UsageRecord): [CounterField, number][] {
  const d = accumulate(emptyCounters(), r);
  return COUNTER_FIELDS.filter((f) => d[f] !== 0).map((f) => [f, d[f]]);
}

export function toRollupRow(dims: CellDims, c: Readonly<RollupCounters>): RollupRow {
  return {
    ...dims,
    requests: c.requests,
    errors: c.errors,
    euRequests: c.euRequests,
    nonEuRequests: c.nonEuRequests,
    promptTokens: c.promptTokens,
    completionTokens: c.completionTokens,
    totalTokens: c.totalTokens,
    costUsd: fromMicros(c.costMicros),
    cacheHits: c.cacheHits,
    cacheSavedUsd: fromMicros(c.cacheSavedMicros),
    cacheCreditedUsd: fromMicros(c.cacheCreditedMicros),
    tokensSaved: c.tokensSaved,
    guardrailBlocks: c.guardrailBlocks,
    guardrailFlags: c.guardrailFlags,
    compressedRequests: c.compressedRequests,
    compressionSavedTokens: c.compressionSavedTokens,
    cacheLookups: c.cacheLookups,
    cacheDirect: c.cacheDirect,
    cacheReuse: c.cacheReuse,
    cacheTweak: c.cacheTweak,
    cacheHitCostUsd: fromMicros(c.cacheHitCostMicros),
    guardrailRedactions: c.guardrailRedactions,
    compressionOriginalTokens: c.compressionOriginalTokens,
    compressionSavedUsd: fromMicros(c.compressionSavedMicros),
    latencyMsTotal: c.latencyMsTotal,
  };
}

/** One security counter of a record: a violation (not `allow`) per guardrail × category × action. */
export interface SecurityDelta {
  guardrail: string;
  category: string;
  action: string;
  /** Always 1: the request. */
  count: number;
  findings: number;
}

/** A request counts once per guardrail × category × action however many matches it had. */
export function securityDeltas(r: UsageRecord): SecurityDelta[] {
  const verdict = r.guardrails;
  if (!verdict) return [];
  const out = new Map<string, SecurityDelta>();
  for (const f of verdict.findings) {
    const action = f.action ?? verdict.action;
    if (action === 'allow') continue;
    const id = JSON.stringify([f.guardrail, f.category, action]);
    const d = out.get(id) ?? { guardrail: f.guardrail, category: f.category, action, count: 1, findings: 0 };
    d.findings += count(f.count);
    out.set(id, d);
  }
  return [...out.values()];
}

export type SecurityCounter = Omit<SecurityRow, 'tenant' | 'day'>;

/** Injective naming of cells and security counters: URI-encoded parts joined by `:`. */
const enc = encodeURIComponent;
const dec = decodeURIComponent;

export const cellMember = (d: Pick<CellDims, 'keyId' | 'model' | 'provider'>): string =>
  `${enc(d.keyId)}:${enc(d.model)}:${enc(d.provider)}`;

export function parseCellMember(m: string): { keyId: string; model: string; provider: string } {
  const [k = '', model = '', p = ''] = m.split(':');
  return { keyId: dec(k), model: dec(model), provider: dec(p) };
}

export const securityField = (d: Pick<SecurityDelta, 'guardrail' | 'category' | 'action'>): string =>
  `${enc(d.guardrail)}:${enc(d.category)}:${enc(d.action)}`;

export function parseSecurityField(f: string): { guardrail: string; category: string; action: string } {
  const [g = '', c = '', a = ''] = f.split(':');
  return { guardrail: dec(g), category: dec(c), action: dec(a) };
}

/** The request log entry: the record itself (it never carries prompt text, keys or credentials). */
export const logEntry = (r: UsageRecord): string => JSON.stringify(r);

export function parseLogEntry(s: string): UsageRecord | undefined {
  try {
    const v = JSON.parse(s) as unknown;
    return typeof v === 'object' && v !== null && 'id' in v && 'at' in v ? (v as UsageRecord) : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a record or cell passes the query's key/model/provider filters. */
export function matchesFilters(
  q: { keyId?: string | undefined; model?: string | undefined; provider?: string | undefined },
  d: { keyId: string; model: string; provider: string },
): boolean {
  return (
    (q.keyId === undefined || q.keyId === d.keyId) &&
    (q.model === undefined || q.model === d.model) &&
    (q.provider === undefined || q.provider === d.provider)
  );
}
