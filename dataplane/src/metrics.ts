/**
 * Prometheus metrics, in a registry owned by the app (not the global one) so several
 * gateways can live in one process. Labels carry names and kinds, never keys or prompts.
 */
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { Deployment } from './config/snapshot.ts';
import type { ConfigStore } from './config/store.ts';
import type { RouterObserver } from './router/router.ts';
import { LiveHistogram, type Series } from './metrics-histogram.ts';
import { TallySet, type Tally } from './metrics-tally.ts';

/** From a millisecond to the longest stream a request deadline allows (300 s). */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

interface ChargeChildren {
  usd: Tally;
  micros: Tally;
  prompt: Tally;
  completion: Tally;
}

interface RouteChildren {
  duration: Series;
  byStatus: Map<number, Tally>;
}

type AttemptLabel = 'deployment' | 'provider' | 'model';

/** One deployment's attempt counters and latency histogram, bound once. */
interface AttemptChildren {
  byOutcome: Map<string, Tally>;
  byFailure: Map<string, Tally>;
  latency: Series;
}

/**
 * How often the event-loop lag histogram (nodejs_eventloop_lag_*) samples the loop: prom-client's
 * own 10 ms, which dashboards and alerts on these series assume. Node records the time between
 * timer firings, so the resolution is the floor of every percentile (an idle loop reads ~10 ms
 * p50 here, ~100 ms at 100 ms) and blocks shorter than it are under-reported. 100 ms was tried
 * and reverted (docs/decisions.md, Speed at one connection).
 */
export const EVENT_LOOP_SAMPLE_MS = 10;

export class Metrics implements RouterObserver {
  readonly registry = new Registry();
  // Hot-path counters count in plain numbers and reach prom-client at scrape (metrics-tally.ts).
  private readonly requestTallies = new TallySet<'route' | 'status'>();
  private readonly spendTallies = new TallySet<'tenant' | 'model' | 'provider'>();
  private readonly spendMicroTallies = new TallySet<'tenant' | 'model' | 'provider'>();
  private readonly tokenTallies = new TallySet<'tenant' | 'model' | 'provider' | 'kind'>();
  private readonly attemptTallies = new TallySet<AttemptLabel | 'outcome'>();
  private readonly failureTallies = new TallySet<AttemptLabel | 'kind'>();
  private readonly cacheLookupTallies = new TallySet<'band'>();
  private readonly compressionTallies = new TallySet<'mode' | 'reason'>();

  readonly requests = this.requestTallies.attach(
    new Counter({
      name: 'gantry_requests_total',
      help: 'Requests answered, by route and status',
      labelNames: ['route', 'status'] as const,
      registers: [this.registry],
      collect: () => this.requestTallies.flush(),
    }),
  );
  // Hot-path histograms observe into arrays and reach prom-client at scrape (metrics-histogram.ts).
  readonly duration = new LiveHistogram({
    name: 'gantry_request_duration_seconds',
    help: 'Time to the end of the response, by route (streams included: up to the request deadline)',
    labelNames: ['route'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });
  readonly timeToFirstToken = new LiveHistogram({
    name: 'gantry_time_to_first_token_seconds',
    help: 'Streams: time from the request arriving to its first token leaving for the client, by model',
    labelNames: ['model'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });
  private inflightNow = 0;
  /**
   * Scaled on by the chart's HPA: requests being answered right now, streams included. Two
   * calls per request, so a plain number, read into the gauge at scrape (a Gauge's inc and dec
   * each validate and hash their labels).
   */
  readonly inflight = {
    inc: (): void => void this.inflightNow++,
    dec: (): void => void this.inflightNow--,
  };
  readonly inflightGauge: Gauge = new Gauge({
    name: 'gantry_inflight_requests',
    help: 'Requests on the public port not yet answered (open streams included)',
    registers: [this.registry],
    collect: (): void => this.inflightGauge.set(this.inflightNow),
  });
  readonly guardrailVerdicts = new Counter({
    name: 'gantry_guardrail_verdicts_total',
    help: 'Guardrail findings by check (injection, secrets, pii, toxicity) and the verdict it led to (flag, redact, block)',
    labelNames: ['check', 'verdict'] as const,
    registers: [this.registry],
  });
  readonly upstreamAttempts = this.attemptTallies.attach(
    new Counter({
      name: 'gantry_upstream_attempts_total',
      help: 'Upstream attempts by deployment, provider, model and outcome',
      labelNames: ['deployment', 'provider', 'model', 'outcome'] as const,
      registers: [this.registry],
      collect: () => this.attemptTallies.flush(),
    }),
  );
  readonly upstreamFailures = this.failureTallies.attach(
    new Counter({
      name: 'gantry_upstream_failures_total',
      help: 'Failed upstream attempts by deployment, provider, model and kind',
      labelNames: ['deployment', 'provider', 'model', 'kind'] as const,
      registers: [this.registry],
      collect: () => this.failureTallies.flush(),
    }),
  );
  readonly upstreamLatency = new LiveHistogram({
    name: 'gantry_upstream_attempt_duration_seconds',
    help: 'Time to the answer (non-streaming) or the first token (streaming) per attempt',
    labelNames: ['deployment', 'provider', 'model'] as const,
    buckets: [0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });
  readonly deploymentQuotaSkips = new Counter({
    name: 'gantry_deployment_quota_skips_total',
    help: 'Attempts not sent to a deployment because its provider quota window (rpm/tpm) was full, by deployment',
    labelNames: ['deployment', 'provider', 'model'] as const,
    registers: [this.registry],
  });
  readonly deploymentQuotaFailures = new Counter({
    name: 'gantry_deployment_quota_store_failures_total',
    help: 'Attempts sent without a quota check because the deployment quota store failed (fails open), by deployment',
    labelNames: ['deployment'] as const,
    registers: [this.registry],
  });
  readonly streamFailures = new Counter({
    name: 'gantry_stream_failures_total',
    help: 'Streams that ended with an error event after bytes reached the client (no deployment could continue them)',
    labelNames: ['model'] as const,
    registers: [this.registry],
  });
  /** Kept for existing dashboards; a float sum drifts, the micro-dollar counter does not. */
  readonly spend = this.spendTallies.attach(
    new Counter({
      name: 'gantry_spend_usd_total',
      help: 'USD charged to callers, by tenant, model and provider (float; prefer gantry_spend_microdollars_total)',
      labelNames: ['tenant', 'model', 'provider'] as const,
      registers: [this.registry],
      collect: () => this.spendTallies.flush(),
    }),
  );
  readonly spendMicros = this.spendMicroTallies.attach(
    new Counter({
      name: 'gantry_spend_microdollars_total',
      help: 'Integer micro-dollars (1e-6 USD) charged to callers, by tenant, model and provider',
      labelNames: ['tenant', 'model', 'provider'] as const,
      registers: [this.registry],
      collect: () => this.spendMicroTallies.flush(),
    }),
  );
  readonly tokens = this.tokenTallies.attach(
    new Counter({
      name: 'gantry_tokens_total',
      help: 'Tokens processed, by tenant, model, provider and kind (prompt, completion)',
      labelNames: ['tenant', 'model', 'provider', 'kind'] as const,
      registers: [this.registry],
      collect: () => this.tokenTallies.flush(),
    }),
  );
  readonly accountingFailures = new Counter({
    name: 'gantry_accounting_failures_total',
    help: 'Settlements or usage records that could not be written at once, by operation',
    labelNames: ['operation'] as const,
    registers: [this.registry],
  });
  readonly journalPending = new Gauge({
    name: 'gantry_settlement_journal_pending',
    help: 'Budget settlements journaled on local disk while the budget store was unreachable, not yet applied (metered requests get 503 while above 0)',
    registers: [this.registry],
  });
  readonly journalDropped = new Counter({
    name: 'gantry_settlement_journal_dropped_total',
    help: 'Journaled settlements the budget store refused for a reason other than being unreachable',
    registers: [this.registry],
  });
  readonly cacheLookups = this.cacheLookupTallies.attach(
    new Counter({
      name: 'gantry_cache_lookups_total',
      help: 'Semantic cache outcomes by band (SKIP when the cache did not apply)',
      labelNames: ['band'] as const,
      registers: [this.registry],
      collect: () => this.cacheLookupTallies.flush(),
    }),
  );
  readonly cacheFailures = new Counter({
    name: 'gantry_cache_failures_total',
    help: 'Cache operations that failed open (embedder, vector index or entry store unreachable)',
    labelNames: ['operation'] as const,
    registers: [this.registry],
  });
  readonly compressions = this.compressionTallies.attach(
    new Counter({
      name: 'gantry_compression_requests_total',
      help: 'Compression-eligible requests by mode (state, none) and fallback reason (none when compressed)',
      labelNames: ['mode', 'reason'] as const,
      registers: [this.registry],
      collect: () => this.compressionTallies.flush(),
    }),
  );
  readonly compressionOriginalTokens = new Counter({
    name: 'gantry_compression_original_tokens_total',
    help: 'Prompt tokens of compressed requests before compression, by tenant, key and model',
    labelNames: ['tenant', 'key', 'model'] as const,
    registers: [this.registry],
  });
  readonly compressionSavedTokens = new Counter({
    name: 'gantry_compression_saved_tokens_total',
    help: 'Prompt tokens compression removed, by tenant, key and model (ratio = saved / original)',
    labelNames: ['tenant', 'key', 'model'] as const,
    registers: [this.registry],
  });
  readonly ccrRecalls = new Counter({
    name: 'gantry_ccr_recalls_total',
    help: 'Entries context recovery re-injected into a request',
    registers: [this.registry],
  });
  readonly configReloads = new Counter({
    name: 'gantry_config_reloads_total',
    help: 'Config reloads by result',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  readonly configVersion = new Gauge({
    name: 'gantry_config_version',
    help: 'Version of the config snapshot being served',
    registers: [this.registry],
  });
  readonly configReloadRejected = new Gauge({
    name: 'gantry_config_reload_rejected',
    help: '1 while the newest config file is rejected and the last good snapshot keeps serving',
    registers: [this.registry],
  });
  readonly configInfo = new Gauge({
    name: 'gantry_config_info',
    help: 'Always 1, labelled with the sha256 of the config file being served (compare pods)',
    labelNames: ['sha256'] as const,
    registers: [this.registry],
  });
  readonly configLeftOut = new Gauge({
    name: 'gantry_config_left_out_deployments',
    help: 'Published deployments this pod does not serve (their apiKeyEnv is unset here); /readyz names them',
    registers: [this.registry],
  });
  readonly configRevokedKeys = new Counter({
    name: 'gantry_config_revoked_keys_total',
    help: 'Keys revoked by config files that were otherwise rejected',
    registers: [this.registry],
  });

  /**
   * Label children bound once per label set: the request path builds no label objects (in a
   * micro-benchmark, settling spend and tokens took about half the time of passing labels).
   */
  private readonly chargeChildren = new Map<string, ChargeChildren>();
  private readonly verdictChildren = new Map<string, Counter.Internal>();
  /** By route (a registered route pattern or "unknown": a bounded set), then by status. */
  private readonly routeChildren = new Map<string, RouteChildren>();
  /** By deployment, provider and model: a bounded set (the configured deployments). */
  private readonly attemptChildren = new Map<string, AttemptChildren>();

  private readCircuits: (() => void) | undefined;
  /** Filled at scrape time from the breakers (nothing on the request path). */
  readonly circuitState = new Gauge({
    name: 'gantry_deployment_circuit_state',
    help: 'Circuit breaker state per deployment: 0 closed, 1 half-open (probing), 2 open (ejected)',
    labelNames: ['deployment', 'model', 'provider'] as const,
    registers: [this.registry],
    collect: () => this.readCircuits?.(),
  });

  constructor(defaults = true) {
    if (defaults)
      collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  }

  /** Report each configured deployment's breaker at every scrape. */
  watchCircuits(
    deployments: () => Iterable<Deployment>,
    state: (name: string) => 'closed' | 'half-open' | 'open',
  ): void {
    const value = { closed: 0, 'half-open': 1, open: 2 } as const;
    this.readCircuits = () => {
      // Reset first: a deployment removed by a reload leaves no stale series.
      this.circuitState.reset();
      for (const d of deployments())
        this.circuitState.set(
          { deployment: d.name, model: d.model, provider: d.provider },
          value[state(d.name)],
        );
    };
  }

  /** Money and tokens one deployment was paid for, on behalf of a tenant. */
  charged(
    tenant: string,
    model: string,
    provider: string,
    costUsd: number,
    prompt: number,
    completion: number,
  ): void {
    const key = `${tenant}\u0000${model}\u0000${provider}`;
    let c = this.chargeChildren.get(key);
    if (!c) {
      const labels = { tenant, model, provider };
      c = {
        usd: this.spendTallies.child(key, labels),
        micros: this.spendMicroTallies.child(key, labels),
        prompt: this.tokenTallies.child(`${key}\u0000prompt`, { ...labels, kind: 'prompt' }),
        completion: this.tokenTallies.child(`${key}\u0000completion`, { ...labels, kind: 'completion' }),
      };
      this.chargeChildren.set(key, c);
    }
    if (costUsd > 0) {
      c.usd.inc(costUsd);
      c.micros.inc(Math.round(costUsd * 1_000_000));
    }
    if (prompt > 0) c.prompt.inc(prompt);
    if (completion > 0) c.completion.inc(completion);
  }

  guardrail(check: string, verdict: string): void {
    const key = `${check}\u0000${verdict}`;
    let c = this.verdictChildren.get(key);
    if (!c) this.verdictChildren.set(key, (c = this.guardrailVerdicts.labels({ check, verdict })));
    c.inc();
  }

  /**
   * One request answered: counted by route and status and, when it got as far as a request
   * context (`seconds` given), timed by route. Children are bound once, so the hot path does
   * no label hashing.
   */
  answered(route: string, status: number, seconds: number | undefined): void {
    let r = this.routeChildren.get(route);
    if (!r) {
      r = { duration: this.duration.child(route, { route }), byStatus: new Map() };
      this.routeChildren.set(route, r);
    }
    let count = r.byStatus.get(status);
    if (!count)
      r.byStatus.set(
        status,
        (count = this.requestTallies.child(`${route}\u0000${status}`, { route, status: String(status) })),
      );
    count.inc();
    if (seconds !== undefined) r.duration.observe(seconds);
  }

  firstToken(model: string, seconds: number): void {
    (this.timeToFirstToken.find(model) ?? this.timeToFirstToken.child(model, { model })).observe(seconds);
  }

  /** Config gauges follow the store: set now and after every reload attempt. */
  observeConfig(store: ConfigStore): void {
    const show = (): void => {
      const status = store.status();
      this.configVersion.set(status.version);
      this.configReloadRejected.set(status.status === 'rejected' ? 1 : 0);
      this.configLeftOut.set(status.leftOut.length);
      this.configInfo.reset();
      if (status.sha256) this.configInfo.set({ sha256: status.sha256 }, 1);
    };
    show();
    store.onReload((e) => {
      this.configReloads.inc({ result: e.ok ? 'ok' : 'rejected' });
      if (!e.ok) this.configRevokedKeys.inc(e.revoked.length);
      show();
    });
  }

  attempt(d: Deployment, outcome: string, seconds: number): void {
    // Keyed by all three labels: a reload may give a deployment name another provider or model.
    const key = `${d.name}\u0000${d.provider}\u0000${d.model}`;
    let a = this.attemptChildren.get(key);
    if (!a) {
      const labels = { deployment: d.name, provider: d.provider, model: d.model };
      a = { byOutcome: new Map(), byFailure: new Map(), latency: this.upstreamLatency.child(key, labels) };
      this.attemptChildren.set(key, a);
    }
    let count = a.byOutcome.get(outcome);
    if (!count) {
      const labels = { deployment: d.name, provider: d.provider, model: d.model, outcome };
      a.byOutcome.set(outcome, (count = this.attemptTallies.child(`${key}\u0000${outcome}`, labels)));
    }
    count.inc();
    if (outcome === 'success') {
      a.latency.observe(seconds);
      return;
    }
    let failed = a.byFailure.get(outcome);
    if (!failed) {
      const labels = { deployment: d.name, provider: d.provider, model: d.model, kind: outcome };
      a.byFailure.set(outcome, (failed = this.failureTallies.child(`${key}\u0000${outcome}`, labels)));
    }
    failed.inc();
  }

  quotaSkipped(d: Deployment): void {
    this.deploymentQuotaSkips.inc({ deployment: d.name, provider: d.provider, model: d.model });
  }

  quotaStoreFailed(d: Deployment): void {
    this.deploymentQuotaFailures.inc({ deployment: d.name });
  }

  /** A semantic cache outcome (band, or SKIP). */
  cacheLookup(band: string): void {
    (this.cacheLookupTallies.get(band) ?? this.cacheLookupTallies.child(band, { band })).inc();
  }

  /** A compression-eligible request: its mode and fallback reason ("none" when compressed). */
  compression(mode: string, reason: string): void {
    const key = `${mode}\u0000${reason}`;
    (this.compressionTallies.get(key) ?? this.compressionTallies.child(key, { mode, reason })).inc();
  }
}
