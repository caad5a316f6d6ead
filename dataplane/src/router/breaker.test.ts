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

/** Open the circuit, wait it out, take the trial and fail it: one more trip. */
function failProbe(s: BreakerState, now: number): BreakerState {
  const a = admission(s, now);
  expect(a).toEqual({ admit: true, probe: true });
  return recordFailure(startProbe(s, now, cfg), now, cfg);
}

const T = 100_000;
const open = (trips = 1, openUntil = T + 1_000): BreakerState => ({
  state: 'open',
  consecutiveFailures: 3,
  trips,
  openUntil,
  probeInFlight: false,
  probeUntil: 0,
});
const halfOpen = (probeUntil: number): BreakerState => ({
  ...open(1, T - 1),
  state: 'half-open',
  probeInFlight: true,
  probeUntil,
});

/**
 * Every state the breaker can be in, crossed with every event, at time T. Each row is the
 * whole expected next state, so nothing a transition touches goes unchecked.
 */
describe('transition table', () => {
  const states: Record<string, BreakerState> = {
    'closed, no failures': closedBreaker(),
    'closed, one below the threshold': { ...closedBreaker(), consecutiveFailures: 2 },
    'open, period running': open(),
    'open, period over': open(2, T),
    'half-open, trial out': halfOpen(T + 5_000),
    'half-open, trial overstayed': halfOpen(T),
  };

  const admissions: Record<string, ReturnType<typeof admission>> = {
    'closed, no failures': { admit: true, probe: false },
    'closed, one below the threshold': { admit: true, probe: false },
    'open, period running': { admit: false, until: T + 1_000 },
    'open, period over': { admit: true, probe: true },
    'half-open, trial out': { admit: false, until: T },
    'half-open, trial overstayed': { admit: true, probe: true },
  };

  const failures: Record<string, BreakerState> = {
    'closed, no failures': { ...closedBreaker(), consecutiveFailures: 1 },
    'closed, one below the threshold': { ...open(1, T + 1_000) },
    // A straggler admitted before the circuit opened does not lengthen the wait.
    'open, period running': { ...open(), consecutiveFailures: 4 },
    'open, period over': { ...open(2, T), consecutiveFailures: 4 },
    'half-open, trial out': { ...open(2, T + 2_000), consecutiveFailures: 4 },
    'half-open, trial overstayed': { ...open(2, T + 2_000), consecutiveFailures: 4 },
  };

  const abandoned: Record<string, BreakerState> = {
    'closed, no failures': states['closed, no failures']!,
    'closed, one below the threshold': states['closed, one below the threshold']!,
    'open, period running': states['open, period running']!,
    'open, period over': states['open, period over']!,
    'half-open, trial out': { ...open(1, T - 1) },
    'half-open, trial overstayed': { ...open(1, T - 1) },
  };

  it.each(Object.keys(states))('%s: admission', (name) => {
    expect(admission(states[name]!, T)).toEqual(admissions[name]);
  });

  it.each(Object.keys(states))('%s: failure', (name) => {
    expect(recordFailure(states[name]!, T, cfg)).toEqual(failures[name]);
  });

  it.each(Object.keys(states))('%s: success closes and forgets', (name) => {
    expect(recordSuccess(states[name]!)).toEqual(closedBreaker());
  });

  it.each(Object.keys(states))('%s: abandoned trial', (name) => {
    expect(abandonProbe(states[name]!)).toEqual(abandoned[name]);
  });

  it.each(Object.keys(states))('%s: taking a trial holds it for maxOpenMs', (name) => {
    const s = startProbe(states[name]!, T, cfg);
    expect(s).toEqual({ ...states[name], state: 'half-open', probeInFlight: true, probeUntil: T + 10_000 });
    expect(admission(s, T + 9_999)).toEqual({ admit: false, until: T + 9_999 });
    expect(admission(s, T + 10_000)).toEqual({ admit: true, probe: true });
  });

  it.each(Object.keys(states))('%s: transitions never mutate their input', (name) => {
    const s = states[name]!;
    const copy = structuredClone(s);
    recordFailure(s, T, cfg);
    recordSuccess(s);
    abandonProbe(s);
    startProbe(s, T, cfg);
    expect(s).toEqual(copy);
  });
});

describe('closed circuit', () => {
  it.each([1, 2])('stays closed after %i failure(s) below the threshold of 3', (n) => {
    const s = failTimes(closedBreaker(), n, 100);
    expect(s.state).toBe('closed');
    expect(s.consecutiveFailures).toBe(n);
    expect(admission(s, 100)).toEqual({ admit: true, probe: false });
  });

  it('a success in between resets the failure count', () => {
    let s = failTimes(closedBreaker(), 2, 0);
    s = recordSuccess(s);
    s = failTimes(s, 2, 0);
    expect(s.state).toBe('closed');
    expect(s.consecutiveFailures).toBe(2);
  });

  it('threshold 1 opens on the first failure', () => {
    expect(recordFailure(closedBreaker(), 0, { ...cfg, failureThreshold: 1 }).state).toBe('open');
  });

  it('defaults: 3 faults open it for 5 s, a trial is held at most 10 s', () => {
    let s = closedBreaker();
    for (let i = 0; i < 3; i++) s = recordFailure(s, 0);
    expect(s.state).toBe('open');
    expect(s.openUntil).toBe(5_000);
    expect(startProbe(s, 5_000).probeUntil).toBe(15_000);
    expect(DEFAULT_BREAKER).toEqual({ failureThreshold: 3, baseOpenMs: 5_000, maxOpenMs: 10_000 });
  });
});

describe('open period', () => {
  it('doubles with each failed trial and is capped at maxOpenMs', () => {
    let s = failTimes(closedBreaker(), 3, 0);
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
    const next = recordFailure({ ...halfOpen(0), trips: 5_000 }, 0, cfg);
    expect(next.openUntil).toBe(10_000);
  });

  it('after recovery the next trip starts again from the base period', () => {
    let s = failProbe(failTimes(closedBreaker(), 3, 0), 1_000);
    s = recordSuccess(startProbe(s, 3_000, cfg));
    s = failTimes(s, 3, 50_000);
    expect(s.trips).toBe(1);
    expect(s.openUntil).toBe(51_000);
  });
});

/**
 * The scenario with the shipped defaults: a deployment fails every call for a
 * minute under steady traffic, then recovers. Trials never lie more than 10 s apart and
 * the first call after recovery that the breaker admits closes it within 15 s.
 */
describe('a minute of failure under traffic, then recovery (defaults)', () => {
  function simulate(trafficEveryMs: number, trialLatencyMs: number) {
    let s = closedBreaker();
    const trials: number[] = [];
    const recoveredAt = 60_000;
    let closedAt: number | undefined;
    for (let now = 0; now <= 120_000 && closedAt === undefined; now += trafficEveryMs) {
      const a = admission(s, now);
      if (!a.admit) continue;
      if (a.probe) {
        s = startProbe(s, now);
        trials.push(now);
      }
      // The call's verdict arrives `trialLatencyMs` later; later calls see the half-open state.
      const verdictAt = now + trialLatencyMs;
      if (verdictAt >= recoveredAt) {
        s = recordSuccess(s);
        closedAt = verdictAt;
      } else s = recordFailure(s, verdictAt);
    }
    return { trials, closedAt: closedAt!, recoveredAt };
  }

  it.each([
    { trafficEveryMs: 100, trialLatencyMs: 5 },
    { trafficEveryMs: 1_000, trialLatencyMs: 50 },
    { trafficEveryMs: 250, trialLatencyMs: 2_000 },
  ])('traffic every $trafficEveryMs ms, verdict after $trialLatencyMs ms', (c) => {
    const { trials, closedAt, recoveredAt } = simulate(c.trafficEveryMs, c.trialLatencyMs);
    expect(trials.length).toBeGreaterThan(4);
    const gaps = trials.slice(1).map((t, i) => t - trials[i]!);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(10_000 + c.trialLatencyMs + c.trafficEveryMs);
    expect(closedAt - recoveredAt).toBeLessThanOrEqual(15_000);
  });

  it('with the old 60 s cap the same scenario would have waited longer than 15 s', () => {
    // Guards the test itself: the scenario is one the previous defaults failed.
    const old: BreakerConfig = { failureThreshold: 3, baseOpenMs: 5_000, maxOpenMs: 60_000 };
    let s = closedBreaker();
    let closedAt: number | undefined;
    for (let now = 0; closedAt === undefined; now += 100) {
      const a = admission(s, now);
      if (!a.admit) continue;
      if (a.probe) s = startProbe(s, now, old);
      if (now >= 60_000) {
        s = recordSuccess(s);
        closedAt = now;
      } else s = recordFailure(s, now, old);
    }
    expect(closedAt - 60_000).toBeGreaterThan(15_000);
  });
});
