/**
 * What this pod knows about each deployment: in-flight calls, a latency average, the
 * circuit breaker and a rate-limit cooldown. Keyed by deployment name so it survives
 * config reloads. Breaker settings come from the deployment's manifest, over the
 * registry's defaults. Only upstream outcomes reach it: callers decide what counts.
 */
import type { Deployment } from '../config/snapshot.ts';
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

export interface HealthView {
  inflight: number;
  /** Exponentially weighted average of time to headers/first token, ms; 0 = unknown. */
  latencyMs: number;
}

export type Availability = { ok: true } | { ok: false; until: number; reason: 'circuit_open' | 'cooldown' };

export type CircuitState = BreakerState['state'];

/** A circuit changed state (metrics, logs). Called synchronously: keep it cheap. */
export type TransitionListener = (deployment: string, from: CircuitState, to: CircuitState) => void;

interface Entry extends HealthView {
  breaker: BreakerState;
  cooldownUntil: number;
  /** How many times the circuit has opened, ever: the epoch a call is admitted in. */
  openings: number;
  /** The claim every non-trial call of the current epoch gets (shared: none allocated per call). */
  call: Claim;
}

const EWMA_WEIGHT = 0.2;

/**
 * A slot taken on a deployment; `probe` when it is the half-open circuit's one trial. `epoch`
 * is how many times the circuit had opened when the call was admitted: a call admitted before
 * the current opening (a long stream) has no say on the circuit any more, or its late verdict
 * would close an ejected deployment, or reopen it during its trial and let a second trial go.
 */
export interface Claim {
  readonly probe: boolean;
  readonly epoch: number;
}

export class HealthRegistry {
  private readonly entries = new Map<string, Entry>();
  private readonly listeners: TransitionListener[] = [];

  constructor(
    private readonly breakerConfig: BreakerConfig = DEFAULT_BREAKER,
    private readonly now: () => number = Date.now,
  ) {}

  private entry(name: string): Entry {
    let e = this.entries.get(name);
    if (!e) {
      e = {
        inflight: 0,
        latencyMs: 0,
        breaker: closedBreaker(),
        cooldownUntil: 0,
        openings: 0,
        call: callIn(0),
      };
      this.entries.set(name, e);
    }
    return e;
  }

  /** Be told of every circuit transition; returns the unsubscribe function. */
  onTransition(listener: TransitionListener): () => void {
    this.listeners.push(listener);
    return () => {
      const i = this.listeners.indexOf(listener);
      if (i !== -1) this.listeners.splice(i, 1);
    };
  }

  private config(d: Deployment): BreakerConfig {
    return d.circuitBreaker === undefined
      ? this.breakerConfig
      : { ...this.breakerConfig, ...d.circuitBreaker };
  }

  /** Every breaker change goes through here so listeners see each transition once. */
  private setBreaker(name: string, e: Entry, next: BreakerState): void {
    const from = e.breaker.state;
    // Only a fault opens the circuit anew (trips grows); a trial given up leaves the epoch.
    if (next.state === 'open' && next.trips > e.breaker.trips) e.call = callIn(++e.openings);
    e.breaker = next;
    if (from !== next.state) for (const l of this.listeners) l(name, from, next.state);
  }

  view(d: Deployment): HealthView {
    return this.entry(d.name);
  }

  availability(d: Deployment): Availability {
    const e = this.entry(d.name);
    const now = this.now();
    if (now < e.cooldownUntil) return { ok: false, until: e.cooldownUntil, reason: 'cooldown' };
    const a = admission(e.breaker, now);
    return a.admit ? { ok: true } : { ok: false, until: a.until, reason: 'circuit_open' };
  }

  /** Claim a slot on the deployment; undefined when its circuit does not admit the call now. */
  claim(d: Deployment): Claim | undefined {
    const e = this.entry(d.name);
    const a = admission(e.breaker, this.now());
    if (!a.admit) return undefined;
    if (a.probe) this.setBreaker(d.name, e, startProbe(e.breaker, this.now(), this.config(d)));
    e.inflight++;
    return a.probe ? { probe: true, epoch: e.openings } : e.call;
  }

  /**
   * The call answered. `provisional`: its verdict comes later (a stream at its first token):
   * a closed circuit keeps its count of faults until `confirm`, or a deployment that always
   * breaks mid-stream would be cleared at every first token and never ejected. A trial's first
   * token still ends the trial (the deployment is back).
   */
  succeed(d: Deployment, latencyMs: number, provisional: boolean, claim: Claim): void {
    const e = this.entry(d.name);
    e.inflight = Math.max(0, e.inflight - 1);
    e.latencyMs = e.latencyMs === 0 ? latencyMs : e.latencyMs + EWMA_WEIGHT * (latencyMs - e.latencyMs);
    if ((provisional && e.breaker.state === 'closed') || stale(e, claim)) return;
    if (e.breaker.state !== 'closed' || e.breaker.consecutiveFailures > 0)
      this.setBreaker(d.name, e, recordSuccess(e.breaker));
  }

  /** A provisional success held to the end (a stream that finished): past faults are cleared. */
  confirm(d: Deployment, claim: Claim): void {
    const e = this.entry(d.name);
    if (stale(e, claim)) return;
    if (e.breaker.state !== 'closed' || e.breaker.consecutiveFailures > 0)
      this.setBreaker(d.name, e, recordSuccess(e.breaker));
  }

  /** A provisional success that failed after all (a stream cut mid-way): a fault, its slot already given back. */
  failAfter(d: Deployment, claim: Claim): void {
    const e = this.entry(d.name);
    if (stale(e, claim)) return;
    this.setBreaker(d.name, e, recordFailure(e.breaker, this.now(), this.config(d)));
  }

  /** A fault of the deployment (5xx, timeout, reset, bad credentials). */
  fail(d: Deployment, claim: Claim): void {
    const e = this.entry(d.name);
    e.inflight = Math.max(0, e.inflight - 1);
    if (stale(e, claim)) return;
    this.setBreaker(d.name, e, recordFailure(e.breaker, this.now(), this.config(d)));
  }

  /**
   * Rate limited: stay away until `retryAfterMs` has passed; not a fault of the deployment.
   * Only the trial itself gives up the trial (`claim`).
   */
  coolDown(d: Deployment, retryAfterMs: number, claim: Claim): void {
    const e = this.entry(d.name);
    e.inflight = Math.max(0, e.inflight - 1);
    e.cooldownUntil = Math.max(e.cooldownUntil, this.now() + retryAfterMs);
    if (claim.probe && e.breaker.state === 'half-open') this.setBreaker(d.name, e, abandonProbe(e.breaker));
  }

  /**
   * The call ended without telling anything about the deployment (caller error, abort). A call
   * admitted before the circuit opened must not end the trial in flight: that let a second
   * trial go while the first was still out, one more per such call.
   */
  release(d: Deployment, claim: Claim): void {
    const e = this.entry(d.name);
    e.inflight = Math.max(0, e.inflight - 1);
    if (claim.probe) this.setBreaker(d.name, e, abandonProbe(e.breaker));
  }

  /** Forget everything learned (tests; an operator's manual reset). */
  reset(): void {
    this.entries.clear();
  }

  circuitState(name: string): CircuitState {
    return this.entry(name).breaker.state;
  }
}

const callIn = (epoch: number): Claim => ({ probe: false, epoch });

/** A verdict from a call admitted before the circuit's current opening. */
const stale = (e: Entry, claim: Claim): boolean => claim.epoch !== e.openings;
