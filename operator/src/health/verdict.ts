/**
 * What the operator's probes answer, decided from a few timestamps so every case is a
 * table test. Liveness fails only when restarting would help: a reconcile that has run far
 * longer than any real one (a hung call with no timeout). A standby is alive and ready:
 * it keeps warm caches so it can take over at once.
 */
export interface HealthFacts {
  /** When the informers finished their first list; undefined while starting. */
  syncedAt: number | undefined;
  /** When the reconcile now running began; undefined when idle. */
  reconcilingSince: number | undefined;
  /** False after shutdown began. */
  running: boolean;
  now: number;
}

export interface ProbeAnswer {
  ok: boolean;
  reason: string;
}

/** A reconcile is a handful of API calls; ten minutes means it is stuck. */
export const STUCK_RECONCILE_MS = 10 * 60_000;

export function liveness(f: HealthFacts): ProbeAnswer {
  if (f.reconcilingSince !== undefined && f.now - f.reconcilingSince > STUCK_RECONCILE_MS)
    return {
      ok: false,
      reason: `reconcile running for ${Math.round((f.now - f.reconcilingSince) / 1000)} s`,
    };
  return { ok: true, reason: 'ok' };
}

export function readiness(f: HealthFacts): ProbeAnswer {
  if (!f.running) return { ok: false, reason: 'shutting down' };
  if (f.syncedAt === undefined) return { ok: false, reason: 'caches not synced yet' };
  return liveness(f);
}
