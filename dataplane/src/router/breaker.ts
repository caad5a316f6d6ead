/**
 * Circuit breaker as pure transitions. Consecutive deployment faults open the circuit
 * (ejecting the deployment); after the open period one trial request is let through
 * (half-open); its success closes the circuit, its failure re-opens it for longer, up to
 * `maxOpenMs`. That cap is also how long a trial may stay unanswered before another one
 * is let through, so while traffic flows a deployment is tried at least every `maxOpenMs`
 * and a recovered one gets traffic back within that bound.
 */
export interface BreakerConfig {
  /** Consecutive faults that open a closed circuit. */
  failureThreshold: number;
  /** First open period; each failed trial doubles it. */
  baseOpenMs: number;
  /** Longest open period, and longest wait for a trial's verdict: the gap between trials never exceeds it. */
  maxOpenMs: number;
}

export const DEFAULT_BREAKER: BreakerConfig = { failureThreshold: 3, baseOpenMs: 5_000, maxOpenMs: 10_000 };

export interface BreakerState {
  state: 'closed' | 'open' | 'half-open';
  consecutiveFailures: number;
  /** How many times in a row the circuit opened; drives the open period's growth. */
  trips: number;
  openUntil: number;
  probeInFlight: boolean;
  /** While a trial is in flight: when it is given up on and another trial may go. */
  probeUntil: number;
}

export const closedBreaker = (): BreakerState => ({
  state: 'closed',
  consecutiveFailures: 0,
  trips: 0,
  openUntil: 0,
  probeInFlight: false,
  probeUntil: 0,
});

export type Admission = { admit: false; until: number } | { admit: true; probe: boolean };

export function admission(s: BreakerState, now: number): Admission {
  if (s.state === 'closed') return { admit: true, probe: false };
  if (now < s.openUntil) return { admit: false, until: s.openUntil };
  // A trial is out: its verdict is due any moment, so callers are told to come back now.
  if (s.probeInFlight && now < s.probeUntil) return { admit: false, until: now };
  return { admit: true, probe: true };
}

/** The trial is taken: the circuit is half-open until its outcome is known or it overstays. */
export function startProbe(s: BreakerState, now: number, cfg: BreakerConfig = DEFAULT_BREAKER): BreakerState {
  return { ...s, state: 'half-open', probeInFlight: true, probeUntil: now + cfg.maxOpenMs };
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
  if (s.state === 'closed' && failures < cfg.failureThreshold) return { ...s, consecutiveFailures: failures };
  // A call admitted before the circuit opened tells nothing new: it must not lengthen the wait.
  if (s.state === 'open') return { ...s, consecutiveFailures: failures };
  const trips = s.trips + 1;
  // Past 2^30 the product is far above any cap; bounding the exponent avoids Infinity.
  const openMs = Math.min(cfg.maxOpenMs, cfg.baseOpenMs * 2 ** Math.min(trips - 1, 30));
  return {
    state: 'open',
    consecutiveFailures: failures,
    trips,
    openUntil: now + openMs,
    probeInFlight: false,
    probeUntil: 0,
  };
}

/** A trial that ended without a verdict on the deployment (e.g. the client went away). */
export function abandonProbe(s: BreakerState): BreakerState {
  return s.state === 'half-open' ? { ...s, state: 'open', probeInFlight: false, probeUntil: 0 } : s;
}
