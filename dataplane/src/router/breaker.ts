/**
 * Circuit breaker as pure transitions. Consecutive deployment faults open the circuit
 * (ejecting the deployment); after the open period one probe request is let through
 * (half-open); its success closes the circuit, its failure re-opens it for longer.
 */
export interface BreakerConfig {
  failureThreshold: number;
  baseOpenMs: number;
  maxOpenMs: number;
}

export const DEFAULT_BREAKER: BreakerConfig = { failureThreshold: 3, baseOpenMs: 5_000, maxOpenMs: 60_000 };

export interface BreakerState {
  state: 'closed' | 'open' | 'half-open';
  consecutiveFailures: number;
  /** How many times in a row the circuit opened; drives the open period's growth. */
  trips: number;
  openUntil: number;
  probeInFlight: boolean;
}

export const closedBreaker = (): BreakerState => ({
  state: 'closed',
  consecutiveFailures: 0,
  trips: 0,
  openUntil: 0,
  probeInFlight: false,
});

export type Admission = { admit: false; until: number } | { admit: true; probe: boolean };

export function admission(s: BreakerState, now: number): Admission {
  if (s.state === 'closed') return { admit: true, probe: false };
  if (now < s.openUntil) return { admit: false, until: s.openUntil };
  if (s.probeInFlight) return { admit: false, until: now };
  return { admit: true, probe: true };
}

/** The probe is taken: the circuit is half-open until its outcome is known. */
export function startProbe(s: BreakerState): BreakerState {
  return { ...s, state: 'half-open', probeInFlight: true };
}

export function recordSuccess(_s: BreakerState): BreakerState {
  return closedBreaker();
}

export function recordFailure(
  s: BreakerState,
  now: number,
  cfg: BreakerConfig = DEFAULT_BREAKER,
): BreakerState {
  const failures = s.consecutiveFailures + 1;
  if (s.state === 'half-open' || failures >= cfg.failureThreshold) {
    const trips = s.trips + 1;
    const openMs = Math.min(cfg.maxOpenMs, cfg.baseOpenMs * 2 ** (trips - 1));
    return {
      state: 'open',
      consecutiveFailures: failures,
      trips,
      openUntil: now + openMs,
      probeInFlight: false,
    };
  }
  return { ...s, consecutiveFailures: failures };
}

/** A probe that ended without a verdict on the deployment (e.g. client went away). */
export function abandonProbe(s: BreakerState): BreakerState {
  return s.state === 'half-open' ? { ...s, state: 'open', probeInFlight: false } : s;
}
