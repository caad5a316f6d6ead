/**
 * Composition root: config store, router, adapters, public and admin apps. `main.ts` and
 * the tests both start Gantry through here, so tests run exactly what ships.
 */
import type { RealtimeLimits } from './realtime/limits.ts';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ProviderKind } from '@gantry/crds';
import type { FastifyBaseLogger, FastifyInstance, FastifyServerOptions } from 'fastify';
import type { Snapshot } from './config/snapshot.ts';
import { loadConfigFile } from './config/load.ts';
import { emptySnapshot, watchSnapshotSecret, type SnapshotSecretRef } from './config/kube-source.ts';
import { providerEnvOnly } from './config/provider-env.ts';
import { ConfigStore, watchConfigFile } from './config/store.ts';
import { uncountedHangWarnings } from './config/hang-warnings.ts';
import { Metrics } from './metrics.ts';
import { adapters } from './providers/index.ts';
import type { BreakerConfig } from './router/breaker.ts';
import { HealthRegistry } from './router/health.ts';
import type { RetryConfig } from './router/policy.ts';
import { Router } from './router/router.ts';
import { UpstreamClient } from './router/upstream.ts';
import { buildAdminApp } from './server/admin.ts';
import { buildApp, DEFAULT_REQUEST_TIMEOUT_MS } from './server/app.ts';
import { ConnectionGuard } from './server/connections.ts';
import { DEFAULT_LIMITS, type ConnectionLimits } from './server/limits.ts';
import { createMinilmEmbedder, minilmDir } from './pipeline/cache/minilm-embedder.ts';
import type { CacheDeps } from './pipeline/cache/stage.ts';
import { RecentCacheMetrics } from './pipeline/cache/recent.ts';
import { createCcrStore } from './pipeline/compression/index.ts';
import { embeddingsCall } from './router/calls.ts';
import { createVectorIndex, type MilvusConsistency } from './stores/vectors/index.ts';
import { createRagIndexStore, ragBoundsFromEnv } from './stores/rag/index.ts';
import { createCacheEntryStore } from './stores/cache-entries/index.ts';
import { warmTokenizer } from './accounting/tokens.ts';
import { adminKeyHashFromEnv } from './server/routes/analytics-auth.ts';
import { compactionSecretFromEnv } from './server/compaction-secret.ts';
import { DEFAULT_STORE_WAIT_MS, JOURNAL_WRITE_WAIT_MS, settledWithin } from './shutdown-wait.ts';
import { createStores, type Stores } from './stores/index.ts';
import { ledgerBoundFromEnv } from './stores/ledger-bound-env.ts';
import { RetryingUsageRecorder } from './stores/usage/index.ts';
import { SettlementJournal } from './stores/journal/journal.ts';
import { owedSummary } from './stores/journal/entries.ts';
import type { JournalLockOptions } from './stores/journal/lock.ts';
import { SettlementsInFlight } from './pipeline/settlements-in-flight.ts';
import { batchSweeper, DEFAULT_BATCH_SWEEP_MS, type SweepReport } from './pipeline/resources/batch-sweep.ts';
import { jobSweeper } from './pipeline/fine-tuning/sweep.ts';
import { OtlpTracer, otlpFromEnv, type OtlpOptions } from './telemetry/otlp.ts';
import { loadStartupAssets, minilmCheckForNewSnapshots, needsMinilm } from './startup-assets.ts';

export interface GatewayOptions {
  /** Standalone: the manifests file, watched for edits. */
  configFile: string;
  /** In a cluster: the Secret the operator publishes the snapshot into (replaces configFile). */
  snapshotSecret?: SnapshotSecretRef | undefined;
  env?: Readonly<Record<string, string | undefined>>;
  host?: string;
  port?: number;
  adminHost?: string;
  adminPort?: number;
  /** Serve deployments whose credential env var is unset from this fake provider. */
  fakeBaseUrl?: (provider: ProviderKind) => string;
  logger?: FastifyServerOptions['logger'];
  watch?: boolean;
  retry?: RetryConfig;
  breaker?: BreakerConfig;
  /**
   * The clock of the breaker, the sweeps, the upstream-404 marks and the deployments' quota
   * windows (tests replay minutes of traffic, or days of 404s, without waiting); Date.now by
   * default.
   */
  clock?: () => number;
  bodyLimitBytes?: number;
  /** Largest file a media upload may carry; 25 MB when unset. */
  maxUploadBytes?: number;
  /** Deepest JSON nesting a request body may have; 64 when unset. */
  maxJsonDepth?: number;
  /** Realtime session limits; DEFAULT_REALTIME_LIMITS for those unset. */
  realtime?: Partial<RealtimeLimits>;
  requestTimeoutMs?: number;
  /** Receive and keep-alive timeouts and the connection cap of the public listener. */
  limits?: Partial<ConnectionLimits>;
  /** On close, how long readiness fails while requests are still accepted (load balancers catch up). */
  preStopMs?: number;
  /** Then how long in-flight requests and streams may take before open streams end with an error. */
  drainTimeoutMs?: number;
  /** Shared state (rate limits, budgets, wallets, usage); in-process when absent. */
  redisUrl?: string | undefined;
  /** Key namespace in Redis (tests isolate themselves with their own). */
  redisPrefix?: string;
  /**
   * Where budget settlements wait on disk while Redis is unreachable (GANTRY_JOURNAL_DIR). One
   * directory per gateway process; keep it across restarts so a restart replays what is left.
   * Default: `<tmpdir>/gantry-journal-<port>`, or a directory of this process alone on port 0.
   */
  journalDir?: string | undefined;
  /** Delay between replays of the journal while Redis stays unreachable (default 1 s). */
  journalRetryMs?: number | undefined;
  /**
   * The journal directory's lock: stale period (10 s), refresh interval (half of it) and how long
   * a start waits for a held lock before refusing (stale + 1 s). Tests shorten them.
   */
  journalLock?: JournalLockOptions | undefined;
  /**
   * The journal directory's lock was lost while serving (logged at error here): the journal
   * has stopped. The command line shuts the process down with a failure code.
   */
  onJournalLockLost?: ((err: Error) => void) | undefined;
  /**
   * On close, how long settlements still in the journal keep being replayed before the process
   * gives up on them (they stay in the journal directory, and are logged). Embedded default 0;
   * the command line's is 10 s.
   */
  journalDrainMs?: number | undefined;
  /**
   * On close, the longest wait for each of: settlements the stores have not acknowledged yet,
   * then the usage recorder's last flush; what is still unfinished is logged (default 2 s).
   */
  storeWaitMs?: number | undefined;
  /**
   * Pause between settlement sweeps of batches and fine-tuning jobs (default 60 s; 0: only
   * `sweepBatches()` and `sweepJobs()` run one).
   */
  batchSweepMs?: number | undefined;
  /** Milvus `host:port` for semantic-cache vectors; in process when absent. */
  milvusAddress?: string | undefined;
  /** Milvus read consistency: Bounded (default) lets a write take a moment to become searchable. */
  milvusConsistency?: MilvusConsistency;
  /** Trace export; by default from GANTRY_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_* in `env`. */
  otlp?: Partial<OtlpOptions>;
  /** Bounds of the in-process cache stores (entries and vectors), global and per tenant. */
  cacheMemory?: {
    maxEntries?: number;
    maxEntriesPerTenant?: number;
    maxBytes?: number;
    maxBytesPerTenant?: number;
  };
}

export interface Gateway {
  url: string;
  adminUrl: string;
  config: ConfigStore;
  app: FastifyInstance;
  admin: FastifyInstance;
  metrics: Metrics;
  health: HealthRegistry;
  stores: Stores;
  /** Settlements waiting for Redis; absent with in-process stores (they cannot be unreachable). */
  journal: SettlementJournal | undefined;
  connections: ConnectionGuard;
  /** One batch settlement sweep now (the timer runs them every `batchSweepMs`). */
  sweepBatches(): Promise<SweepReport>;
  /** One fine-tuning job settlement sweep now (the same timer runs them). */
  sweepJobs(): Promise<SweepReport>;
  /** Graceful: readiness fails, the pre-stop window, the drain, then everything is released. */
  close(opts?: { preStopMs?: number }): Promise<void>;
}

/** Embedded (tests, tools): no pre-stop window, 10 s drain. The command line has production defaults. */
const EMBEDDED_DRAIN_TIMEOUT_MS = 10_000;
/** After the drain deadline, how long streams have to write their error event before sockets are cut. */
const CUT_AFTER_MS = 2_000;

/**
 * A Tenant's `wallet.balanceUsd` is the total funded through config: each pod books the
 * difference as a ledger entry, idempotently, at boot and on every reload.
 */
async function syncWallets(stores: Stores, snapshot: Snapshot, log: FastifyBaseLogger): Promise<void> {
  for (const tenant of snapshot.tenants.values()) {
    const funded = tenant.spec.wallet?.balanceUsd;
    if (funded === undefined) continue;
    await stores.wallets.syncConfigured(tenant.name, funded).catch((err: unknown) => {
      log.warn({ tenant: tenant.name, err: (err as Error).message }, 'wallet funding not synced');
    });
  }
}

/** Budgets and token limits count prompt tokens before the call: load the tokenizer at boot. */
const metersTokens = (snapshot: Snapshot): boolean =>
  [...snapshot.keys.values()].some(
    (k) => k.spec.budget !== undefined || k.spec.rateLimit?.tokensPerMinute !== undefined,
  );

/** The `model` cache embedder: Gantry's own router, an embeddings ModelDeployment, float vectors. */
async function embedThroughRouter(
  router: Router,
  upstream: UpstreamClient,
  snapshot: Snapshot,
  model: string,
  texts: string[],
): Promise<number[][]> {
  const route = {
    model,
    snapshot,
    allowed: () => true,
    needs: ['embeddings'] as const,
    signal: new AbortController().signal,
    deadline: Date.now() + 30_000,
  };
  const { value } = await router.execute(route, (d) =>
    embeddingsCall(
      {
        upstream,
        adapter: adapters[d.provider],
        deployment: d,
        signal: route.signal,
        deadline: route.deadline,
      },
      { model, input: texts },
    ),
  );
  return [...value.data].sort((a, b) => a.index - b.index).map((e) => e.embedding as number[]);
}

/** Where each provider kind lives on the built-in fake provider. */
export function fakeBaseUrls(fakeUrl: string): (provider: ProviderKind) => string {
  return (provider) =>
    provider === 'gemini' ? `${fakeUrl}/v1beta` : provider === 'azure-openai' ? fakeUrl : `${fakeUrl}/v1`;
}

/**
 * Opens the settlement journal of Redis-backed stores and applies what an earlier run left in
 * it before serving (Redis is reachable by now); later replays follow every reconnect.
 */
async function openJournal(
  stores: Stores,
  metrics: Metrics,
  opts: GatewayOptions,
  log: () => FastifyBaseLogger,
): Promise<SettlementJournal | undefined> {
  if (stores.kind !== 'redis') return undefined;
  const dir =
    opts.journalDir ??
    join(
      tmpdir(),
      opts.port ? `gantry-journal-${opts.port}` : `gantry-journal-${process.pid}-${randomUUID()}`,
    );
  const journal = await SettlementJournal.open({
    dir,
    retryMs: opts.journalRetryMs,
    apply: async ({ reservation, amountUsd }) => {
      await (amountUsd > 0
        ? stores.budgets.settle(reservation, amountUsd)
        : stores.budgets.release(reservation));
    },
    onDropped: () => metrics.journalDropped.inc(),
    onPending: (n) => metrics.journalPending.set(n),
    lock: opts.journalLock,
    onLockLost: (err) => {
      log().error(
        { err: err.message, journalDir: dir, ...owedSummary(journal.queued()) },
        'settlement journal lock lost: journaling stopped (another process may own the directory now)',
      );
      opts.onJournalLockLost?.(err);
    },
  });
  stores.onReconnect(() => void journal.replay());
  await journal.replay();
  return journal;
}

/**
 * Charges journaled during a Redis outage belong to this process alone: once it exits they
 * wait for the next process on the same directory, which on an emptyDir never comes. So the
 * shutdown keeps replaying them for a bounded window and logs, at error level, whatever is
 * still owed after it.
 */
async function drainJournal(
  journal: SettlementJournal,
  withinMs: number,
  log: FastifyBaseLogger,
): Promise<void> {
  if (journal.pending === 0) return;
  if (withinMs > 0)
    log.warn({ pending: journal.pending, withinMs }, 'replaying journaled settlements before exit');
  const left = await journal.drain(withinMs);
  if (left.length === 0) {
    log.info('journaled settlements applied before exit');
    return;
  }
  log.error(
    { ...owedSummary(left), journalDir: journal.dir },
    'exiting with journaled settlements unapplied: they are replayed only by a gateway started on the same journal directory',
  );
}

export async function startGateway(opts: GatewayOptions): Promise<Gateway> {
  const env = opts.env ?? process.env;
  // Read first: a secret or admin key too short stops the start before anything is opened.
  const compactionSecret = compactionSecretFromEnv(env);
  const adminKeyHash = adminKeyHashFromEnv(env);
  // A standalone file is its pod's own config; a published snapshot is anyone's who may write a
  // ModelDeployment, so it sees only the provider variables the chart lists.
  const loadOpts = { env: opts.snapshotSecret ? providerEnvOnly(env) : env, fakeBaseUrl: opts.fakeBaseUrl };
  const initial = opts.snapshotSecret
    ? { snapshot: emptySnapshot(opts.snapshotSecret), warnings: [] as string[], sha256: undefined }
    : await loadConfigFile(opts.configFile, { ...loadOpts, version: 1 });
  if ('ok' in initial && !initial.ok) throw new Error(`invalid config:\n  ${initial.errors.join('\n  ')}`);
  // Before any port or store is opened: a missing or corrupt bundled file is a start-up error.
  // One minilm folder for the start-up check, later checks and the embedder alike.
  const minilmFolder = minilmDir(env);
  loadStartupAssets(initial.snapshot, minilmFolder);

  const config = new ConfigStore(initial.snapshot, initial.sha256);
  const metrics = new Metrics();
  const health = new HealthRegistry(opts.breaker, opts.clock);
  metrics.watchCircuits(
    function* () {
      for (const route of config.current().models.values()) yield* route.deployments;
    },
    (name) => health.circuitState(name),
  );
  const upstream = new UpstreamClient();
  const stores = createStores({
    redisUrl: opts.redisUrl,
    prefix: opts.redisPrefix,
    ...ledgerBoundFromEnv(env),
    deploymentClock: opts.clock,
  });
  await stores.ready();
  // A journal directory another gateway holds stops the start; the stores opened for it close.
  const journal = await openJournal(stores, metrics, opts, () => app.log).catch(async (err: unknown) => {
    await stores.close();
    throw err;
  });
  const settlements = new SettlementsInFlight((err) =>
    app.log.error({ err: (err as Error).message }, 'settlement failed after the answer'),
  );
  const recorder = new RetryingUsageRecorder(stores.usage, {
    onError: (err) => app.log.warn({ err: (err as Error).message }, 'usage record retry failed'),
  });
  const router = new Router({
    health,
    observer: metrics,
    retry: opts.retry,
    quota: stores.deploymentQuota,
    log: (fields, message) => app.log.warn(fields, message),
  });
  const cache: CacheDeps = {
    vectors: await createVectorIndex({
      milvusAddress: opts.milvusAddress,
      milvus: { consistency: opts.milvusConsistency },
      memory: opts.cacheMemory && {
        maxEntries: opts.cacheMemory.maxEntries,
        maxEntriesPerTenant: opts.cacheMemory.maxEntriesPerTenant,
      },
    }),
    entries: createCacheEntryStore({
      redis: opts.redisUrl ? { url: opts.redisUrl } : undefined,
      prefix: opts.redisPrefix,
      ...opts.cacheMemory,
    }),
    recent: new RecentCacheMetrics(),
    metrics,
    embedVia: (snapshot, model, texts) => embedThroughRouter(router, upstream, snapshot, model, texts),
    minilm: createMinilmEmbedder(minilmFolder),
  };
  const otlp = otlpFromEnv(env);
  const tracer = otlp
    ? new OtlpTracer({
        ...otlp,
        ...opts.otlp,
        onDrop: (count, reason) => app.log.warn({ count, reason }, 'trace spans dropped'),
      })
    : undefined;
  const ccr = createCcrStore({
    redis: opts.redisUrl ? { url: opts.redisUrl } : undefined,
    prefix: opts.redisPrefix,
  });
  const rag = await createRagIndexStore({
    stores,
    milvusAddress: opts.milvusAddress,
    milvusConsistency: opts.milvusConsistency,
    bounds: ragBoundsFromEnv(env),
  });
  const sweeper = setInterval(() => void cache.vectors.sweep().catch(() => undefined), 10 * 60_000);
  sweeper.unref();
  const shutdown = new AbortController();
  const app = buildApp({
    config,
    limits: opts.limits,
    shutdown: shutdown.signal,
    pipeline: {
      router,
      upstream,
      adapters,
      stores,
      metrics,
      recorder,
      cache,
      journal,
      ccr,
      settlements,
      now: opts.clock,
    },
    metrics,
    logger: opts.logger,
    bodyLimitBytes: opts.bodyLimitBytes,
    maxUploadBytes: opts.maxUploadBytes,
    maxJsonDepth: opts.maxJsonDepth,
    realtime: opts.realtime,
    requestTimeoutMs: opts.requestTimeoutMs,
    adminKeyHash,
    compactionSecret,
    tracer,
    rag: rag.store,
  });
  for (const w of initial.warnings) app.log.warn(w);
  const requestTimeoutMs = opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  for (const w of uncountedHangWarnings(initial.snapshot, requestTimeoutMs)) app.log.warn(w);
  const sweepDeps = {
    stores,
    upstream,
    adapters,
    metrics,
    recorder,
    snapshot: () => config.current(),
    log: app.log,
    now: opts.clock,
  };
  const batches = batchSweeper(sweepDeps);
  const jobs = jobSweeper(sweepDeps);
  const batchSweepMs = opts.batchSweepMs ?? DEFAULT_BATCH_SWEEP_MS;
  const batchTimer =
    batchSweepMs > 0
      ? setInterval(() => {
          for (const [what, sweep] of [
            ['batch', batches],
            ['fine-tuning job', jobs],
          ] as const)
            void sweep.tick().catch((err: unknown) => {
              app.log.warn({ err: (err as Error).message }, `${what} sweep failed`);
            });
        }, batchSweepMs).unref()
      : undefined;
  await syncWallets(stores, initial.snapshot, app.log);
  if (metersTokens(initial.snapshot)) warmTokenizer();
  metrics.observeConfig(config);
  const checkMinilm = minilmCheckForNewSnapshots(minilmFolder, app.log, needsMinilm(initial.snapshot));
  config.onReload((e) => {
    if (e.ok) {
      for (const w of uncountedHangWarnings(config.current(), requestTimeoutMs)) app.log.warn(w);
      void syncWallets(stores, config.current(), app.log);
      if (metersTokens(config.current())) warmTokenizer();
      checkMinilm(config.current());
    }
  });
  const stopWatching = opts.snapshotSecret
    ? await watchSnapshotSecret(opts.snapshotSecret, config, loadOpts, app.log)
    : opts.watch === false
      ? () => undefined
      : watchConfigFile(opts.configFile, config, loadOpts, app.log);

  const connections = new ConnectionGuard(
    app.server,
    opts.limits?.maxConnections ?? DEFAULT_LIMITS.maxConnections,
    'served',
    opts.limits?.maxPipelinedRequests ?? DEFAULT_LIMITS.maxPipelinedRequests,
  );
  let closing = false;
  let closed: Promise<void> | undefined;
  const shutDown = async (preStopMs: number): Promise<void> => {
    closing = true;
    await stopWatching();
    // Readiness fails now; the listener still serves until load balancers have stopped sending.
    if (preStopMs > 0) await new Promise((resolve) => setTimeout(resolve, preStopMs));
    const drainTimeoutMs = opts.drainTimeoutMs ?? EMBEDDED_DRAIN_TIMEOUT_MS;
    app.log.info({ drainTimeoutMs }, 'draining');
    // Realtime sessions last up to an hour: told to reconnect elsewhere now (1001), not cut later.
    app.realtime.closeAll();
    connections.drain();
    const deadline = setTimeout(() => {
      app.log.warn('drain deadline reached: ending open requests');
      shutdown.abort();
      setTimeout(() => {
        app.server.closeAllConnections();
        app.realtime.terminateAll();
      }, CUT_AFTER_MS).unref();
    }, drainTimeoutMs);
    await app.close();
    clearTimeout(deadline);
    clearInterval(batchTimer);
    // A sweep under way finishes before the upstream client and the stores it uses close.
    await Promise.all([batches.idle(), jobs.idle()]);
    await admin.close();
    await upstream.close();
    await tracer?.close();
    clearInterval(sweeper);
    // Answers went out before their settlements were acknowledged: those land first, unless a
    // store hangs. The journal drain and the recorder's last flush still use the open stores.
    const storeWaitMs = opts.storeWaitMs ?? DEFAULT_STORE_WAIT_MS;
    if (!(await settledWithin(settlements.idle(), storeWaitMs)))
      app.log.warn(
        { settlements: settlements.size, owedUsd: settlements.owedUsd, storeWaitMs },
        'settlements the stores have not acknowledged: cutting the store connection so they fall back to the journal',
      );
    if (journal) await drainJournal(journal, opts.journalDrainMs ?? 0, app.log);
    if (!(await settledWithin(recorder.close(), storeWaitMs)))
      app.log.error(
        { records: recorder.pending + recorder.writing, storeWaitMs },
        'exiting with usage records not written: analytics will miss them (their charges are settled apart)',
      );
    // Closing the stores rejects their hung commands at once (redis/client.ts): a settlement
    // still waiting on one falls back to the journal, which stays open until it is on disk.
    // Before, the journal closed first and such a charge, refused by it, was lost.
    await stores.close();
    if (!(await settledWithin(settlements.idle(), JOURNAL_WRITE_WAIT_MS)))
      app.log.error(
        { settlements: settlements.size, owedUsd: settlements.owedUsd, waitedMs: JOURNAL_WRITE_WAIT_MS },
        'exiting with settlements the stores have not acknowledged: their charges and usage records may be missing',
      );
    await journal?.close();
    await Promise.all([cache.vectors.close(), cache.entries.close(), ccr.close(), rag.close()]);
  };
  // In a cluster a pod is ready once the operator's first snapshot has loaded.
  const admin = buildAdminApp(
    config,
    metrics,
    () => !closing && config.current().version > 0,
    opts.limits,
    app.log.child({ listener: 'admin' }),
  );
  let url: string;
  let adminUrl: string;
  try {
    url = await app.listen({ host: opts.host ?? '127.0.0.1', port: opts.port ?? 0 });
    adminUrl = await admin.listen({ host: opts.adminHost ?? '127.0.0.1', port: opts.adminPort ?? 0 });
  } catch (err) {
    // A port already taken: what the start opened is closed again, the journal's lock above
    // all, or an embedder retrying in this process would find its own directory locked.
    await shutDown(0).catch(() => undefined);
    throw err;
  }
  return {
    url,
    adminUrl,
    config,
    app,
    admin,
    metrics,
    health,
    stores,
    journal,
    connections,
    sweepBatches: () => batches.tick(),
    sweepJobs: () => jobs.tick(),
    close(closeOpts = {}) {
      closed ??= shutDown(closeOpts.preStopMs ?? opts.preStopMs ?? 0);
      return closed;
    },
  };
}
