/**
 * Prometheus metrics, in a registry owned by the app (not the global one) so several
 * gateways can live in one process. Labels carry names and kinds, never keys or prompts.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Deployment } from './config/snapshot.ts';
import type { ConfigStore } from './config/store.ts';
import type { HealthRegistry } from './router/health.ts';
import type { RouterObserver } from './router/router.ts';

const CIRCUIT_VALUE = { closed: 0, 'half-open': 1, open: 2 } as const;

export class Metrics implements RouterObserver {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: 'gantry_requests_total',
    help: 'Requests answered, by route and status',
    labelNames: ['route', 'status'] as const,
    registers: [this.registry],
  });
  readonly duration = new Histogram({
    name: 'gantry_request_duration_seconds',
    help: 'Time to the end of the response, by route',
    labelNames: ['route'] as const,
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });
  readonly upstreamAttempts = new Counter({
    name: 'gantry_upstream_attempts_total',
    help: 'Upstream attempts by deployment, provider, model and outcome',
    labelNames: ['deployment', 'provider', 'model', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly upstreamFailures = new Counter({
    name: 'gantry_upstream_failures_total',
    help: 'Failed upstream attempts by deployment, provider, model and kind',
    labelNames: ['deployment', 'provider', 'model', 'kind'] as const,
    registers: [this.registry],
  });
  readonly upstreamLatency = new Histogram({
    name: 'gantry_upstream_attempt_duration_seconds',
    help: 'Time to the answer (non-streaming) or the first token (streaming) per attempt',
    labelNames: ['deployment', 'provider', 'model'] as const,
    buckets: [0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });
  readonly streamFailures = new Counter({
    name: 'gantry_stream_failures_total',
    help: 'Streams that ended with an error event after bytes reached the client (no deployment could continue them)',
    labelNames: ['model'] as const,
    registers: [this.registry],
  });
  readonly spend = new Counter({
    name: 'gantry_spend_usd_total',
    help: 'USD charged to callers, by tenant, model and provider',
    labelNames: ['tenant', 'model', 'provider'] as const,
    registers: [this.registry],
  });
  readonly tokens = new Counter({
    name: 'gantry_tokens_total',
    help: 'Tokens processed, by tenant, model, provider and kind (prompt, completion)',
    labelNames: ['tenant', 'model', 'provider', 'kind'] as const,
    registers: [this.registry],
  });
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
  readonly cacheLookups = new Counter({
    name: 'gantry_cache_lookups_total',
    help: 'Semantic cache outcomes by band (SKIP when the cache did not apply)',
    labelNames: ['band'] as const,
    registers: [this.registry],
  });
  readonly cacheFailures = new Counter({
    name: 'gantry_cache_failures_total',
    help: 'Cache operations that failed open (embedder, vector index or entry store unreachable)',
    labelNames: ['operation'] as const,
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
  readonly configRevokedKeys = new Counter({
    name: 'gantry_config_revoked_keys_total',
    help: 'Keys revoked by config files that were otherwise rejected',
    registers: [this.registry],
  });

  constructor(defaults = true) {
    if (defaults) collectDefaultMetrics({ register: this.registry });
  }

  /**
   * `gantry_deployment_circuit_state` {deployment}: 0 closed, 1 half-open, 2 open. Read from
   * the breakers when scraped, so the request path pays nothing for it.
   */
  observeCircuits(health: HealthRegistry, deployments: () => Iterable<string>): void {
    new Gauge({
      name: 'gantry_deployment_circuit_state',
      help: 'Circuit breaker state per deployment: 0 closed, 1 half-open, 2 open',
      labelNames: ['deployment'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const name of deployments())
          this.set({ deployment: name }, CIRCUIT_VALUE[health.circuitState(name)]);
      },
    });
  }

  /** Config gauges follow the store: set now and after every reload attempt. */
  observeConfig(store: ConfigStore): void {
    const show = (): void => {
      const status = store.status();
      this.configVersion.set(status.version);
      this.configReloadRejected.set(status.status === 'rejected' ? 1 : 0);
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
    this.upstreamAttempts.inc({ deployment: d.name, provider: d.provider, model: d.model, outcome });
    if (outcome === 'success')
      this.upstreamLatency.observe({ deployment: d.name, provider: d.provider, model: d.model }, seconds);
    else
      this.upstreamFailures.inc({ deployment: d.name, provider: d.provider, model: d.model, kind: outcome });
  }
}
