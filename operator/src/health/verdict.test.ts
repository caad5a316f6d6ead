import { describe, expect, it } from 'vitest';
import { STUCK_RECONCILE_MS, liveness, readiness, type HealthFacts } from './verdict.ts';

const base: HealthFacts = { syncedAt: 1_000, reconcilingSince: undefined, running: true, now: 10_000 };

describe('operator probes', () => {
  it.each([
    ['idle and synced', base, true, true],
    ['still listing', { ...base, syncedAt: undefined }, true, false],
    ['reconciling briefly', { ...base, reconcilingSince: 9_000 }, true, true],
    ['reconcile at the limit', { ...base, reconcilingSince: 10_000 - STUCK_RECONCILE_MS }, true, true],
    ['reconcile stuck', { ...base, reconcilingSince: 10_000 - STUCK_RECONCILE_MS - 1 }, false, false],
    ['shutting down', { ...base, running: false }, true, false],
  ] as const)('%s → live %s, ready %s', (_name, facts, live, ready) => {
    expect(liveness(facts).ok).toBe(live);
    expect(readiness(facts).ok).toBe(ready);
  });

  it('names the reason it fails', () => {
    expect(readiness({ ...base, syncedAt: undefined }).reason).toMatch(/not synced/);
    expect(liveness({ ...base, reconcilingSince: 0, now: STUCK_RECONCILE_MS + 5_000 }).reason).toMatch(
      /605 s/,
    );
  });
});
