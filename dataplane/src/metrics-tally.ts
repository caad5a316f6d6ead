/**
 * Counter children kept as plain numbers on the request path and handed to prom-client only
 * when the registry is read. A prom-client child is no cheaper than passing labels: its `inc`
 * hashes and validates the label object again on every call, which showed up in CPU profiles
 * of the default chat path (five counters per request).
 */
import type { Counter } from 'prom-client';

/** One label set's increments since the last scrape. */
export class Tally {
  pending = 0;
  constructor(readonly labels: Readonly<Record<string, string>>) {}

  inc(value = 1): void {
    // prom-client refuses the same values at its own `inc`; failing here keeps the error at
    // the caller rather than at the next scrape.
    if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
    if (value < 0) throw new Error('It is not possible to decrease a counter');
    this.pending += value;
  }
}

/**
 * The tallies of one counter, by a caller-chosen key for its label set. Pass `collect: () =>
 * set.flush()` to the counter so every read (`/metrics`, `counter.get()`) sees all increments.
 */
export class TallySet<L extends string> {
  private readonly children = new Map<string, Tally>();
  private counter: Counter<L> | undefined;

  /** Set once the counter exists (it is built with this set's `flush` as its collect hook). */
  attach(counter: Counter<L>): Counter<L> {
    this.counter = counter;
    return counter;
  }

  /** The tally for `key`, if one was made; `get(k) ?? child(k, {...})` builds labels only once. */
  get(key: string): Tally | undefined {
    return this.children.get(key);
  }

  /** The tally for `key`, made with `labels` the first time the key is seen. */
  child(key: string, labels: Record<L, string>): Tally {
    let t = this.children.get(key);
    if (!t) this.children.set(key, (t = new Tally(labels)));
    return t;
  }

  flush(): void {
    const counter = this.counter;
    if (!counter) return;
    for (const t of this.children.values()) {
      if (t.pending === 0) continue;
      counter.inc(t.labels as Partial<Record<L, string>>, t.pending);
      t.pending = 0;
    }
  }
}
