/**
 * Histograms whose hot path is an array increment. prom-client's `observe`, even on a child
 * bound with `labels()`, converts, validates and hashes the label object on every call (1.6 %
 * of a default request's CPU for its two observations); here a label set is resolved once into
 * a `Series` that its caller keeps, and prom-client's Registry reads the series only when it is
 * scraped. The Registry takes any object with a name, help, type, aggregator and `get()`
 * (`registerMetric`), and prints it with its own code, so the text exposition is prom-client's:
 * the same lines, label order and number formatting as a prom-client Histogram with the same
 * observations (metrics-histogram.test.ts compares them).
 */
import { validateMetricName, type Metric, type Registry } from 'prom-client';

/** One exported sample, in the shape prom-client's Histogram gives from `get()`. */
interface Sample {
  value: number;
  labels: Record<string, string | number>;
  metricName: string;
  /** Buckets carry `null` (no exemplars are kept), as prom-client's do without exemplars. */
  exemplar?: null;
}

/** The same before its set's labels are merged in (Histogram's `getForPromString()`). */
interface SharedSample extends Sample {
  sharedLabels: Readonly<Record<string, string>>;
}

interface Exported<S> {
  name: string;
  help: string;
  type: 'histogram';
  aggregator: 'sum';
  values: S[];
}

/** A label set's counts: `buckets[i]` observations fell at or under bound i and above i-1. */
export class Series {
  readonly buckets: Float64Array;
  sum = 0;
  count = 0;
  /** Whether the histogram exports this series (prom-client has no entry before an observation). */
  exported = false;
  constructor(
    private readonly bounds: readonly number[],
    readonly labels: Readonly<Record<string, string>>,
    /** Tells the histogram, at the first observation since it was made or reset. */
    private readonly onFirstObservation: (s: Series) => void,
  ) {
    this.buckets = new Float64Array(bounds.length);
  }

  observe(value: number): void {
    // prom-client refuses the same values; failing here keeps the error at the caller.
    if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]!) {
        this.buckets[i]!++;
        break;
      }
    }
    // Above the last bound only the +Inf bucket (the count) holds it, as in prom-client.
    this.sum += value;
    this.count++;
    if (!this.exported) this.onFirstObservation(this);
  }
}

export interface HistogramConfig<L extends string> {
  name: string;
  help: string;
  labelNames: readonly L[];
  buckets: readonly number[];
  registers: readonly Registry[];
}

export class LiveHistogram<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram' as const;
  readonly aggregator = 'sum' as const;
  private readonly bounds: readonly number[];
  private readonly labelNames: ReadonlySet<string>;
  /** By a caller-chosen key for the label set. */
  private readonly series = new Map<string, Series>();
  /**
   * The exported series, in prom-client's order: by first observation since the series was
   * made or the histogram last reset (prom-client makes its entry at that observation).
   */
  private observed: Series[] = [];
  /** An unlabelled histogram's one series, whatever key its callers use. */
  private readonly unlabelled: Series | undefined;

  constructor(config: HistogramConfig<L>) {
    if (!validateMetricName(config.name)) throw new Error(`Invalid metric name: ${config.name}`);
    if (config.labelNames.includes('le' as L)) throw new Error('le is a reserved label keyword');
    this.name = config.name;
    this.help = config.help;
    this.labelNames = new Set(config.labelNames);
    // Taken as given, as prom-client does; the search for an observation's bucket needs them ascending.
    if (config.buckets.some((b, i) => i > 0 && b <= config.buckets[i - 1]!))
      throw new Error(`${config.name}: buckets must be ascending`);
    this.bounds = Object.freeze([...config.buckets]);
    // prom-client prints an unlabelled histogram's zero buckets before any observation (its
    // one entry exists from the start), though not after a reset until observed again.
    if (this.labelNames.size === 0) {
      this.unlabelled = new Series(this.bounds, {}, this.export);
      this.series.set('', this.unlabelled);
      this.export(this.unlabelled);
    }
    // The Registry's types list only prom-client's own classes; at run time it reads name,
    // help, type, aggregator and get() (or getForPromString()), and reset() on resetMetrics().
    for (const r of config.registers) r.registerMetric(this as unknown as Metric);
  }

  /** The series for `key`, if one was made; `get(k) ?? child(k, {...})` builds labels once. */
  find(key: string): Series | undefined {
    return this.series.get(key);
  }

  /** The series for `key`, made with `labels` the first time the key is seen. */
  child(key: string, labels: Record<L, string>): Series {
    let s = this.series.get(key);
    if (!s) {
      for (const name of Object.keys(labels))
        if (!this.labelNames.has(name))
          throw new Error(`Added label "${name}" is not included in initial labelset`);
      if (this.unlabelled) s = this.unlabelled;
      else s = new Series(this.bounds, labels, this.export);
      this.series.set(key, s);
    }
    return s;
  }

  /**
   * Zero every series and forget the export order, as prom-client empties its entries; callers
   * keep their series objects, which go on counting and are exported again once observed.
   */
  reset(): void {
    this.observed = [];
    for (const s of new Set(this.series.values())) {
      s.buckets.fill(0);
      s.sum = 0;
      s.count = 0;
      s.exported = false;
    }
  }

  /** Appends a series to the export order, at its first observation since creation or reset. */
  private readonly export = (s: Series): void => {
    s.exported = true;
    this.observed.push(s);
  };

  /**
   * What the Registry prints: as prom-client's Histogram gives it, each sample's own labels
   * (`le` on buckets) with the set's labels beside them as `sharedLabels`, so `le` comes first
   * and the Registry formats each set's labels once.
   */
  getForPromString(): Promise<Exported<SharedSample>> {
    const values: SharedSample[] = [];
    const bucketName = `${this.name}_bucket`;
    const sumName = `${this.name}_sum`;
    const countName = `${this.name}_count`;
    // A set prom-client never observed is not exported: it only exists after an observation.
    for (const s of this.observed) {
      const shared = s.labels;
      let acc = 0;
      for (let i = 0; i < this.bounds.length; i++) {
        acc += s.buckets[i]!;
        values.push({
          value: acc,
          labels: { le: this.bounds[i]! },
          exemplar: null,
          sharedLabels: shared,
          metricName: bucketName,
        });
      }
      values.push({
        value: s.count,
        labels: { le: '+Inf' },
        exemplar: null,
        sharedLabels: shared,
        metricName: bucketName,
      });
      values.push({ value: s.sum, labels: {}, sharedLabels: shared, metricName: sumName });
      values.push({ value: s.count, labels: {}, sharedLabels: shared, metricName: countName });
    }
    return Promise.resolve({
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values,
    });
  }

  /** prom-client's MetricObjectWithValues: each sample's labels with the set's merged in, `le` first. */
  async get(): Promise<Exported<Sample>> {
    const data = await this.getForPromString();
    return {
      ...data,
      // The Registry's JSON sees the rest of prom-client's sample as it is; only labels merge.
      values: data.values.map(({ labels, sharedLabels, ...sample }) => ({
        ...sample,
        labels: { ...labels, ...sharedLabels },
      })),
    };
  }
}
