/** A tenant's semantic-cache analytics: hits by band, hit rate, tokens and money saved, wallet credits. Pure. */
import { eachDay, toPeriod, type DayRange } from './analytics-dates.ts';
import type { CacheView } from './analytics-types.ts';
import { cmp, groupBy, rate, sum, sumUsd } from './analytics-sum.ts';
import type { RollupRow } from './usage.ts';

export function cacheView(tenant: string, period: DayRange, rows: readonly RollupRow[]): CacheView {
  const lookups = sum(rows, (r) => r.cacheLookups);
  const hits = sum(rows, (r) => r.cacheHits);
  const perDay = groupBy(rows, (r) => r.day);
  return {
    tenant_id: tenant,
    period: toPeriod(period),
    lookups,
    hits,
    misses: lookups - hits,
    hit_rate: rate(hits, lookups),
    by_band: {
      DIRECT: sum(rows, (r) => r.cacheDirect),
      REUSE: sum(rows, (r) => r.cacheReuse),
      TWEAK: sum(rows, (r) => r.cacheTweak),
      MISS: lookups - hits,
    },
    tokens_saved: sum(rows, (r) => r.tokensSaved),
    savings_usd: sumUsd(rows, (r) => r.cacheSavedUsd),
    credits_usd: sumUsd(rows, (r) => r.cacheCreditedUsd),
    by_day: eachDay(period).map((date) => {
      const g = perDay.get(date) ?? [];
      const l = sum(g, (r) => r.cacheLookups);
      const h = sum(g, (r) => r.cacheHits);
      return {
        date,
        lookups: l,
        hits: h,
        hit_rate: rate(h, l),
        tokens_saved: sum(g, (r) => r.tokensSaved),
        savings_usd: sumUsd(g, (r) => r.cacheSavedUsd),
        credits_usd: sumUsd(g, (r) => r.cacheCreditedUsd),
      };
    }),
    by_model: [...groupBy(rows, (r) => r.model)]
      .map(([model, g]) => {
        const l = sum(g, (r) => r.cacheLookups);
        const h = sum(g, (r) => r.cacheHits);
        return {
          model,
          lookups: l,
          hits: h,
          hit_rate: rate(h, l),
          savings_usd: sumUsd(g, (r) => r.cacheSavedUsd),
        };
      })
      .filter((m) => m.lookups > 0)
      .sort((a, b) => b.hits - a.hits || cmp(a.model, b.model)),
  };
}
