/** Retention and bounds shared by both usage stores. */

export interface UsageStoreOptions {
  /** Request-log entries kept per tenant, newest first (default 10,000). */
  logLimit?: number;
  /** How long a record id is remembered so a retried record is not counted twice (default a day). */
  dedupeMs?: number;
  /** Days of rollups and security counters kept past the day they describe (default 400: a year-long range works). */
  retentionDays?: number;
}

export const DEFAULT_LOG_LIMIT = 10_000;
export const DEFAULT_DEDUPE_MS = 86_400_000;
export const DEFAULT_RETENTION_DAYS = 400;

export interface ResolvedUsageOptions {
  logLimit: number;
  dedupeMs: number;
  retentionDays: number;
}

export function resolveUsageOptions(o: UsageStoreOptions = {}): ResolvedUsageOptions {
  return {
    logLimit: Math.max(1, Math.floor(o.logLimit ?? DEFAULT_LOG_LIMIT)),
    dedupeMs: Math.max(1, Math.floor(o.dedupeMs ?? DEFAULT_DEDUPE_MS)),
    retentionDays: Math.max(1, Math.floor(o.retentionDays ?? DEFAULT_RETENTION_DAYS)),
  };
}
