/**
 * Summing rollup rows. Money is summed in integer micro-dollars and converted once, so totals
 * are exact (0.1 + 0.2 is 0.3 here) and agree with the budget store's spend to the µ$.
 */
import { fromMicros, toMicros } from '../stores/money.ts';
import type { BreakdownCounts, UsageTotals } from './analytics-types.ts';
import type { RollupRow } from './usage.ts';

/** Sum of USD amounts, exact to the micro-dollar. */
export function sumUsd<T>(items: readonly T[], f: (item: T) => number): number {
  let micros = 0;
  for (const i of items) micros += toMicros(f(i));
  return fromMicros(micros);
}

export const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export const sum = <T>(items: readonly T[], f: (item: T) => number): number =>
  items.reduce((s, i) => s + f(i), 0);

/** A fraction with four decimals; 0 when there is nothing to divide by. */
export const rate = (part: number, whole: number): number =>
  whole > 0 ? Math.round((part / whole) * 10_000) / 10_000 : 0;

const round1 = (n: number): number => Math.round(n * 10) / 10;

export const violations = (r: RollupRow): number =>
  r.guardrailBlocks + r.guardrailFlags + r.guardrailRedactions;

export function totals(rows: readonly RollupRow[]): UsageTotals {
  const requests = sum(rows, (r) => r.requests);
  const eu = sum(rows, (r) => r.euRequests);
  const nonEu = sum(rows, (r) => r.nonEuRequests);
  const lookups = sum(rows, (r) => r.cacheLookups);
  const hits = sum(rows, (r) => r.cacheHits);
  const original = sum(rows, (r) => r.compressionOriginalTokens);
  const saved = sum(rows, (r) => r.compressionSavedTokens);
  const blocked = sum(rows, (r) => r.guardrailBlocks);
  const redacted = sum(rows, (r) => r.guardrailRedactions);
  const flagged = sum(rows, (r) => r.guardrailFlags);
  return {
    requests,
    errors: sum(rows, (r) => r.errors),
    eu_requests: eu,
    non_eu_requests: nonEu,
    unserved_requests: requests - eu - nonEu,
    tokens: {
      prompt: sum(rows, (r) => r.promptTokens),
      completion: sum(rows, (r) => r.completionTokens),
      total: sum(rows, (r) => r.totalTokens),
    },
    spend_usd: sumUsd(rows, (r) => r.costUsd),
    avg_latency_ms: requests > 0 ? round1(sum(rows, (r) => r.latencyMsTotal) / requests) : 0,
    cache: {
      lookups,
      hits,
      hit_rate: rate(hits, lookups),
      tokens_saved: sum(rows, (r) => r.tokensSaved),
      savings_usd: sumUsd(rows, (r) => r.cacheSavedUsd),
      credits_usd: sumUsd(rows, (r) => r.cacheCreditedUsd),
    },
    guardrails: { violations: blocked + redacted + flagged, blocked, redacted, flagged },
    compression: {
      requests: sum(rows, (r) => r.compressedRequests),
      original_tokens: original,
      saved_tokens: saved,
      ratio: rate(saved, original),
      savings_usd: sumUsd(rows, (r) => r.compressionSavedUsd),
    },
  };
}

export function breakdownCounts(rows: readonly RollupRow[]): BreakdownCounts {
  return {
    requests: sum(rows, (r) => r.requests),
    errors: sum(rows, (r) => r.errors),
    eu_requests: sum(rows, (r) => r.euRequests),
    non_eu_requests: sum(rows, (r) => r.nonEuRequests),
    prompt_tokens: sum(rows, (r) => r.promptTokens),
    completion_tokens: sum(rows, (r) => r.completionTokens),
    total_tokens: sum(rows, (r) => r.totalTokens),
    spend_usd: sumUsd(rows, (r) => r.costUsd),
    cache_hits: sum(rows, (r) => r.cacheHits),
    cache_savings_usd: sumUsd(rows, (r) => r.cacheSavedUsd),
  };
}

/** Rows grouped by a dimension, in first-seen order. */
export function groupBy<T, K>(items: readonly T[], key: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const i of items) {
    const k = key(i);
    const g = groups.get(k);
    if (g) g.push(i);
    else groups.set(k, [i]);
  }
  return groups;
}

/** Highest amount first, then by name, so equal lines keep a stable order. */
export function sortByAmount<T>(items: T[], amount: (item: T) => number, name: (item: T) => string): T[] {
  return items.sort((a, b) => {
    const d = amount(b) - amount(a);
    if (d !== 0) return d;
    return cmp(name(a), name(b));
  });
}
