import { beforeEach, describe, expect, it } from 'vitest';
import type { Deployment } from '../config/snapshot.ts';
import type { BreakerConfig } from './breaker.ts';
import { HealthRegistry } from './health.ts';
import { claimed, testDeployment } from './testing.ts';

const dep = (name: string): Deployment => testDeployment({ name });

const breaker: BreakerConfig = { failureThreshold: 2, baseOpenMs: 1_000, maxOpenMs: 8_000 };

let now = 0;
let health: HealthRegistry;
const a = dep('a');
const b = dep('b');

beforeEach(() => {
  now = 10_000;
  health = new HealthRegistry(breaker, () => now);
});

/** A call on `d` that fails, its slot granted. */
function failOnce(d: Deployment): void {
  health.fail(d, claimed(health, d));
}

describe('inflight accounting', () => {
  it('a new deployment is idle, closed and available', () => {
    expect(health.view(a)).toMatchObject({ inflight: 0, latencyMs: 0 });
    expect(health.availability(a)).toEqual({ ok: true });
    expect(health.circuitState('a')).toBe('closed');
  });

  it('claim counts up; succeed, fail, coolDown and release each count down by one', () => {
    const [c1, c2, c3, c4] = [1, 2, 3, 4].map(() => claimed(health, a));
    expect(health.view(a).inflight).toBe(4);
    health.succeed(a, 10, false, c1!);
    expect(health.view(a).inflight).toBe(3);
    health.fail(a, c2!);
    expect(health.view(a).inflight).toBe(2);
    health.coolDown(a, 1, c3!);
    expect(health.view(a).inflight).toBe(1);
    health.release(a, c4!);
    expect(health.view(a).inflight).toBe(0);
  });

  it('never goes below zero (a call reported more than once)', () => {
    const once = claimed(health, a);
    health.release(a, once);
    health.succeed(a, 5, false, once);
    health.fail(a, once);
    health.coolDown(a, 1, once);
    expect(health.view(a).inflight).toBe(0);
  });

  it('is per deployment name, shared by equal-named deployments (survives reloads)', () => {
    claimed(health, a);
    expect(health.view(b).inflight).toBe(0);
    expect(health.view(dep('a')).inflight).toBe(1);
  });
});

describe('latency average', () => {
  it('the first sample is taken as is, later ones move it by 20%', () => {
    health.succeed(a, 100, false, claimed(health, a));
    expect(health.view(a).latencyMs).toBe(100);
    health.succeed(a, 200, false, claimed(health, a));
    expect(health.view(a).latencyMs).toBeCloseTo(120);
    health.succeed(a, 20, false, claimed(health, a));
    expect(health.view(a).latencyMs).toBeCloseTo(100);
  });

  it('converges towards a steady latency', () => {
    health.succeed(a, 1_000, false, claimed(health, a));
    for (let i = 0; i < 50; i++) {
      health.succeed(a, 50, false, claimed(health, a));
    }
    expect(health.view(a).latencyMs).toBeCloseTo(50, 0);
  });

  it('failures do not feed the average', () => {
    health.succeed(a, 100, false, claimed(health, a));
    failOnce(a);
    expect(health.view(a).latencyMs).toBe(100);
  });
});

describe('cooldown from rate limits', () => {
  it('makes the deployment unavailable until retry-after has passed', () => {
    health.coolDown(a, 3_000, claimed(health, a));
    expect(health.availability(a)).toEqual({ ok: false, until: 13_000, reason: 'cooldown' });
    now = 12_999;
    expect(health.availability(a).ok).toBe(false);
    now = 13_000;
    expect(health.availability(a)).toEqual({ ok: true });
  });

  it('a shorter later cooldown does not shorten a longer one', () => {
    health.coolDown(a, 5_000, claimed(health, a));
    health.coolDown(a, 1_000, claimed(health, a));
    expect(health.availability(a)).toEqual({ ok: false, until: 15_000, reason: 'cooldown' });
  });

  it('a later, longer cooldown extends it', () => {
    health.coolDown(a, 1_000, claimed(health, a));
    now += 500;
    health.coolDown(a, 2_000, claimed(health, a));
    expect(health.availability(a)).toEqual({ ok: false, until: 12_500, reason: 'cooldown' });
  });

  it('is not a fault: the circuit stays closed however many 429s arrive', () => {
    for (let i = 0; i < 10; i++) {
      health.coolDown(a, 0, claimed(health, a));
    }
    expect(health.circuitState('a')).toBe('closed');
  });

  it('only affects its own deployment', () => {
    health.coolDown(a, 3_000, claimed(health, a));
    expect(health.availability(b)).toEqual({ ok: true });
  });
});

describe('breaker through claim/fail/succeed', () => {
  it('opens after the threshold of faults and refuses new calls until the open period ends', () => {
    failOnce(a);
    expect(health.circuitState('a')).toBe('closed');
    failOnce(a);
    expect(health.circuitState('a')).toBe('open');
    expect(health.availability(a)).toEqual({ ok: false, until: 11_000, reason: 'circuit_open' });
    expect(health.claim(a)).toBeUndefined();
    expect(health.view(a).inflight).toBe(0);
  });

  it('after the open period, exactly one probe is admitted', () => {
    failOnce(a);
    failOnce(a);
    now = 11_000;
    expect(health.availability(a)).toEqual({ ok: true });
    expect(health.claim(a)).toMatchObject({ probe: true });
    expect(health.circuitState('a')).toBe('half-open');
    expect(health.claim(a)).toBeUndefined();
    expect(health.availability(a).ok).toBe(false);
    expect(health.availability(a)).toMatchObject({ reason: 'circuit_open' });
    expect(health.view(a).inflight).toBe(1);
  });

  it('a successful probe closes the circuit', () => {
    failOnce(a);
    failOnce(a);
    now = 11_000;
    health.succeed(a, 50, false, claimed(health, a));
    expect(health.circuitState('a')).toBe('closed');
    expect(health.claim(a)).toMatchObject({ probe: false });
    expect(health.claim(a)).toMatchObject({ probe: false });
  });

  it('a failed probe re-opens it for twice as long', () => {
    failOnce(a);
    failOnce(a);
    now = 11_000;
    failOnce(a);
    expect(health.circuitState('a')).toBe('open');
    expect(health.availability(a)).toEqual({ ok: false, until: 13_000, reason: 'circuit_open' });
  });

  it('a probe that ends without a verdict (release) lets the next caller probe', () => {
    failOnce(a);
    failOnce(a);
    now = 11_000;
    health.release(a, claimed(health, a));
    expect(health.circuitState('a')).toBe('open');
    expect(health.availability(a)).toEqual({ ok: true });
    expect(health.claim(a)).toMatchObject({ probe: true });
    expect(health.circuitState('a')).toBe('half-open');
  });

  it('a rate-limited probe abandons the probe and cools the deployment down', () => {
    failOnce(a);
    failOnce(a);
    now = 11_000;
    health.coolDown(a, 2_000, claimed(health, a));
    expect(health.circuitState('a')).toBe('open');
    expect(health.availability(a)).toEqual({ ok: false, until: 13_000, reason: 'cooldown' });
    now = 13_000;
    expect(health.claim(a)).toMatchObject({ probe: true });
    expect(health.circuitState('a')).toBe('half-open');
  });

  it('a success between faults resets the count', () => {
    failOnce(a);
    health.succeed(a, 10, false, claimed(health, a));
    failOnce(a);
    expect(health.circuitState('a')).toBe('closed');
  });

  it('claim ignores a cooldown (a retry that waited out Retry-After may go)', () => {
    health.coolDown(a, 5_000, claimed(health, a));
    expect(health.claim(a)).toBeDefined();
  });

  it('cooldown is reported before an open circuit', () => {
    // Admitted while closed, rate limited once the circuit has opened.
    const late = claimed(health, a);
    failOnce(a);
    failOnce(a);
    health.coolDown(a, 5_000, late);
    expect(health.availability(a)).toMatchObject({ ok: false, reason: 'cooldown', until: 15_000 });
  });
});

describe('bounded trials', () => {
  it('a trial that overstays maxOpenMs lets another trial go, so trials are never further apart', () => {
    failOnce(a);
    failOnce(a);
    now = 11_000;
    expect(health.claim(a)).toMatchObject({ probe: true }); // the trial hangs
    now = 11_000 + breaker.maxOpenMs - 1;
    expect(health.claim(a)).toBeUndefined();
    now = 11_000 + breaker.maxOpenMs;
    const trial = claimed(health, a);
    expect(trial).toMatchObject({ probe: true });
    expect(health.circuitState('a')).toBe('half-open');
    health.succeed(a, 10, false, trial);
    expect(health.circuitState('a')).toBe('closed');
  });
});

describe('breaker settings from the deployment (manifest spec.circuitBreaker)', () => {
  it('the deployment threshold and periods override the registry defaults', () => {
    const strict = testDeployment({
      name: 's',
      circuitBreaker: { failureThreshold: 1, baseOpenMs: 200, maxOpenMs: 300 },
    });
    failOnce(strict);
    expect(health.circuitState('s')).toBe('open');
    expect(health.availability(strict)).toEqual({ ok: false, until: 10_200, reason: 'circuit_open' });
    now = 10_200;
    failOnce(strict); // failed trial: 400 ms capped to 300
    expect(health.availability(strict)).toEqual({ ok: false, until: 10_500, reason: 'circuit_open' });
  });

  it('settings it leaves out come from the registry', () => {
    const partial = testDeployment({ name: 'p', circuitBreaker: { baseOpenMs: 50 } });
    failOnce(partial);
    expect(health.circuitState('p')).toBe('closed'); // threshold 2 from the registry
    failOnce(partial);
    expect(health.availability(partial)).toEqual({ ok: false, until: 10_050, reason: 'circuit_open' });
  });
});

describe('onTransition', () => {
  it('reports each state change once, in order, and stops after unsubscribing', () => {
    const seen: string[] = [];
    const off = health.onTransition((name, from, to) => seen.push(`${name}:${from}->${to}`));
    failOnce(a);
    failOnce(a); // opens
    failOnce(b); // b stays closed: no transition
    now = 11_000;
    health.release(a, claimed(health, a)); // abandoned
    health.fail(a, claimed(health, a)); // failed trial
    now = 20_000;
    health.succeed(a, 5, false, claimed(health, a));
    expect(seen).toEqual([
      'a:closed->open',
      'a:open->half-open',
      'a:half-open->open',
      'a:open->half-open',
      'a:half-open->open',
      'a:open->half-open',
      'a:half-open->closed',
    ]);
    off();
    failOnce(a);
    failOnce(a);
    expect(seen).toHaveLength(7);
  });
});

describe('the half-open trial belongs to the call that took it', () => {
  it('a call admitted while closed ends without a verdict: the trial stays the only one out', () => {
    const stale = claimed(health, a);
    expect(stale).toMatchObject({ probe: false });
    failOnce(a);
    failOnce(a);
    expect(health.circuitState('a')).toBe('open');
    now += breaker.baseOpenMs;
    const trial = claimed(health, a);
    expect(trial).toMatchObject({ probe: true });
    health.release(a, stale);
    health.coolDown(a, 1, stale);
    expect(health.circuitState('a')).toBe('half-open');
    expect(health.claim(a)).toBeUndefined();
    // The trial itself giving up does let the next one go.
    health.release(a, trial);
    expect(health.claim(a)).toMatchObject({ probe: true });
  });
});

describe('a provisional success (a stream at its first token)', () => {
  it('keeps a closed circuit’s faults until confirmed; a cut after it is one more', () => {
    failOnce(a);
    const stream = claimed(health, a);
    health.succeed(a, 5, true, stream);
    health.failAfter(a, stream);
    expect(health.circuitState('a')).toBe('open');
    expect(health.view(a).inflight).toBe(0);
  });
  it('confirmed, it clears them', () => {
    failOnce(a);
    const stream = claimed(health, a);
    health.succeed(a, 5, true, stream);
    health.confirm(a, stream);
    failOnce(a);
    expect(health.circuitState('a')).toBe('closed');
  });
  it('a trial’s first token still closes the circuit', () => {
    failOnce(a);
    failOnce(a);
    now += breaker.baseOpenMs;
    const trial = claimed(health, a);
    expect(trial).toMatchObject({ probe: true });
    health.succeed(a, 5, true, trial);
    expect(health.circuitState('a')).toBe('closed');
  });
});

describe('a stream admitted before the circuit opened has no say on it', () => {
  /** A long stream admitted while closed, at its first token; then the circuit opens. */
  function staleStream() {
    const stream = health.claim(a)!;
    health.succeed(a, 10, true, stream);
    failOnce(a);
    failOnce(a);
    expect(health.circuitState('a')).toBe('open');
    return stream;
  }
  it('finishing while open, it does not close the circuit: the ejection stands until its trial', () => {
    const stream = staleStream();
    now += 100;
    health.confirm(a, stream);
    expect(health.circuitState('a')).toBe('open');
    expect(health.claim(a)).toBeUndefined();
  });
  it('cut during the trial, it neither reopens the circuit nor lets a second trial go', () => {
    const stream = staleStream();
    now += breaker.baseOpenMs;
    const trial = claimed(health, a);
    expect(trial).toMatchObject({ probe: true });
    health.failAfter(a, stream);
    expect(health.circuitState('a')).toBe('half-open');
    // Past the doubled open period a reopened circuit would have admitted; the trial is still out.
    now += 2 * breaker.baseOpenMs;
    expect(health.claim(a)).toBeUndefined();
    // The trial's own verdict still decides.
    health.succeed(a, 5, false, trial);
    expect(health.circuitState('a')).toBe('closed');
  });
  it('a non-streaming call admitted before the opening, failing during the trial, is ignored too', () => {
    const old = health.claim(a)!;
    failOnce(a);
    failOnce(a);
    now += breaker.baseOpenMs;
    expect(health.claim(a)).toMatchObject({ probe: true });
    health.fail(a, old);
    expect(health.circuitState('a')).toBe('half-open');
    expect(health.view(a).inflight).toBe(1);
  });
  it('a stream admitted after the circuit closed again is counted as usual', () => {
    staleStream();
    now += breaker.baseOpenMs;
    const trial = health.claim(a)!;
    health.succeed(a, 5, false, trial);
    const fresh = health.claim(a)!;
    health.succeed(a, 5, true, fresh);
    failOnce(a);
    health.failAfter(a, fresh);
    expect(health.circuitState('a')).toBe('open');
  });
});
