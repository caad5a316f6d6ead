import { describe, expect, it } from 'vitest';
import {
  abandonProbe,
  admission,
  closedBreaker,
  DEFAULT_BREAKER,
  recordFailure,
  recordSuccess,
  startProbe,
  type BreakerConfig,
  type BreakerState,
} from './breaker.ts';

const cfg: BreakerConfig = { failureThreshold: 3, baseOpenMs: 1_000, maxOpenMs: 10_000 };

/** Fail `n` times in a row at `now`. */
function failTimes(s: BreakerState, n: number, now: number): BreakerState {
  let state = s;
  for (let i = 0; i < n; i++) state = recordFailure(state, now, cfg);
  return state;
}

/** Open the circuit, wait it out, take the probe and fail it: one more trip. */
function failProbe(s: BreakerState, now: number): BreakerState {
  const a = admission(s, now);
  expect(a).toEqual({ admit: true, probe: true });
  return recordFailure(startProbe(s), now, cfg);
}

describe('closed circuit', () => {
  it('starts closed and admits without a probe', () => {
    const s = closedBreaker();
    expect(s).toEqual({
      state: 'closed',
      consecutiveFailures: 0,
      trips: 0,
      openUntil: 0,
      probeInFlight: false,
    });
    expect(admission(s, 0)).toEqual({ admit: true, probe: false });
    expect(admission(s, Number.MAX_SAFE_INTEGER)).toEqual({ admit: true, probe: false });
  });

  it.each([1, 2])('stays closed after %i failure(s) below the threshold of 3', (n) => {
    const s = failTimes(closedBreaker(), n, 100);
    expect(s.state).toBe('closed');
    expect(s.consecutiveFailures).toBe(n);
    expect(s.trips).toBe(0);
    expect(admission(s, 100)).toEqual({ admit: true, probe: false });
  });

  it('opens exactly at the threshold, for the base open period', () => {
    const s = failTimes(closedBreaker(), 3, 100);
    expect(s).toEqual({
      state: 'open',
      consecutiveFailures: 3,
      trips: 1,
      openUntil: 1_100,
      probeInFlight: false,
    });
  });

  it('a success in between resets the failure count', () => {
    let s = failTimes(closedBreaker(), 2, 0);
    s = recordSuccess(s);
    s = failTimes(s, 2, 0);
    expect(s.state).toBe('closed');
    expect(s.consecutiveFailures).toBe(2);
  });

  it('threshold 1 opens on the first failure', () => {
    const s = recordFailure(closedBreaker(), 0, { ...cfg, failureThreshold: 1 });
    expect(s.state).toBe('open');
  });

  it('uses the default config when none is given', () => {
    let s = closedBreaker();
    for (let i = 0; i < DEFAULT_BREAKER.failureThreshold; i++) s = recordFailure(s, 0);
    expect(s.state).toBe('open');
    expect(s.openUntil).toBe(DEFAULT_BREAKER.baseOpenMs);
  });

  it('recordFailure does not mutate its input', () => {
    const s = closedBreaker();
    recordFailure(s, 0, cfg);
    expect(s).toEqual(closedBreaker());
  });
});

describe('open circuit', () => {
  const open = failTimes(closedBreaker(), 3, 0);

  it('refuses until openUntil, reporting when it reopens', () => {
    expect(admission(open, 0)).toEqual({ admit: false, until: 1_000 });
    expect(admission(open, 999)).toEqual({ admit: false, until: 1_000 });
  });

  it('admits a probe from openUntil on', () => {
    expect(admission(open, 1_000)).toEqual({ admit: true, probe: true });
    expect(admission(open, 50_000)).toEqual({ admit: true, probe: true });
  });

  it('the open period doubles with each trip and is capped', () => {
    let s = open;
    let now = 0;
    const periods: number[] = [s.openUntil - now];
    for (let i = 0; i < 6; i++) {
      now = s.openUntil;
      s = failProbe(s, now);
      periods.push(s.openUntil - now);
    }
    expect(periods).toEqual([1_000, 2_000, 4_000, 8_000, 10_000, 10_000, 10_000]);
    expect(s.trips).toBe(7);
  });

  it('the cap holds for any number of trips (no overflow to Infinity/NaN)', () => {
    const s: BreakerState = { ...open, state: 'half-open', trips: 5_000, probeInFlight: true };
    const next = recordFailure(s, 0, cfg);
    expect(next.openUntil).toBe(10_000);
  });
});

describe('half-open circuit', () => {
  const open = failTimes(closedBreaker(), 3, 0);

  it('admits exactly one probe: a second caller is refused while it is in flight', () => {
    const probing = startProbe(open);
    expect(probing.state).toBe('half-open');
    expect(probing.probeInFlight).toBe(true);
    expect(admission(probing, 1_000).admit).toBe(false);
    expect(admission(probing, 1_000_000).admit).toBe(false);
  });

  it('a refused caller during the probe is told to come back now, not at the old openUntil', () => {
    const a = admission(startProbe(open), 5_000);
    expect(a).toEqual({ admit: false, until: 5_000 });
  });

  it('probe success closes the circuit and forgets trips and failures', () => {
    const s = recordSuccess(startProbe(open));
    expect(s).toEqual(closedBreaker());
    expect(admission(s, 1_000)).toEqual({ admit: true, probe: false });
  });

  it('after recovery, the next trip starts again from the base period', () => {
    let s = failProbe(open, 1_000); // trips 2
    s = recordSuccess(startProbe(s));
    s = failTimes(s, 3, 50_000);
    expect(s.trips).toBe(1);
    expect(s.openUntil).toBe(51_000);
  });

  it('probe failure re-opens at once (one failure suffices) and for longer', () => {
    const s = failProbe(open, 1_000);
    expect(s.state).toBe('open');
    expect(s.probeInFlight).toBe(false);
    expect(s.trips).toBe(2);
    expect(s.openUntil).toBe(1_000 + 2_000);
    expect(admission(s, 2_999)).toEqual({ admit: false, until: 3_000 });
    expect(admission(s, 3_000)).toEqual({ admit: true, probe: true });
  });
});

describe('abandonProbe', () => {
  const open = failTimes(closedBreaker(), 3, 0);

  it('returns a half-open circuit to open with no probe in flight, so another probe may go', () => {
    const s = abandonProbe(startProbe(open));
    expect(s.state).toBe('open');
    expect(s.probeInFlight).toBe(false);
    // Neither a new trip nor a longer wait: the probe told nothing about the deployment.
    expect(s.trips).toBe(open.trips);
    expect(s.openUntil).toBe(open.openUntil);
    expect(admission(s, 1_000)).toEqual({ admit: true, probe: true });
  });

  it('leaves closed and open circuits unchanged', () => {
    const closed = failTimes(closedBreaker(), 2, 0);
    expect(abandonProbe(closed)).toBe(closed);
    expect(abandonProbe(open)).toBe(open);
  });
});
