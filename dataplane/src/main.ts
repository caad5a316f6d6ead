/**
 * `npm start`: run the data plane on a gantry.yaml of manifests. With no provider key set,
 * the deployments are served by the built-in fake provider, so it works offline.
 */
import { writeSync } from 'node:fs';
import pino from 'pino';
import { parseCli } from './cli.ts';
import { cacheMemoryFromEnv } from './stores/cache-bounds-env.ts';
import { jsonDepthLimit } from './formats/json-depth.ts';
import { DEFAULT_LINE_BATCH, LineBatch } from './telemetry/log-lines.ts';
import pkg from '../../package.json' with { type: 'json' };

/**
 * The checkout's version, built into the bundle (esbuild inlines JSON imports): a bundle copied
 * away from the checkout still knows it, and --version reads no file.
 */
const version = (): string => pkg.version;

const cli = parseCli(process.argv.slice(2), process.env);
if (cli.kind === 'help') {
  process.stdout.write(cli.text);
  process.exit(0);
}
if (cli.kind === 'version') {
  process.stdout.write(`gantry ${version()}\n`);
  process.exit(0);
}
if (cli.kind === 'error') {
  process.stderr.write(`gantry: ${cli.message}\n`);
  process.exit(2);
}
const options = cli.options;

// Log lines are buffered and written to stdout by asynchronous writes: a synchronous write per
// request line held every request up whenever stdout's reader lagged (13.5 % of the busy
// samples in the bench's profile). Lines are also batched (one write per 50 ms or 16 K
// characters): a write per line cost a fifth of a request's CPU at one connection. Both
// buffers are flushed on shutdown below and on any other exit.
const logDestination = new LineBatch(pino.destination({ dest: 1, sync: false }), {
  ...DEFAULT_LINE_BATCH,
  writeSync: (chunk) => writeSync(1, chunk),
});
process.once('exit', () => logDestination.flushSync());
const logger = {
  level: options.logLevel,
  redact: ['req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers["x-goog-api-key"]'],
  stream: logDestination,
};

/** The chart passes the Redis password from a Secret on its own, never inside a plain URL value. */
function redisUrlWithPassword(url: string | undefined, password: string | undefined): string | undefined {
  if (!url) return undefined;
  if (!password) return url;
  const u = new URL(url);
  u.password = encodeURIComponent(password);
  return u.toString();
}

/** `namespace/name`, already checked by parseCli. */
function snapshotSecretRef(value: string | undefined): { namespace: string; name: string } | undefined {
  if (value === undefined) return undefined;
  const [namespace = '', name = ''] = value.split('/');
  return { namespace, name };
}

async function main(): Promise<void> {
  // Imported after the command line is checked, so --help and a refusal answer at once.
  const { fakeBaseUrls, startGateway } = await import('./gateway.ts');
  // Loaded only when used, so a production data plane never carries the fake.
  const fake =
    options.fakeProvider === 'off'
      ? undefined
      : await (await import('./fake-provider/index.ts')).startFakeProvider({ port: 0, host: '127.0.0.1' });
  // A journal whose directory lock was lost has stopped (gateway.ts logs why): the process
  // drains and exits with a failure code, and its supervisor starts a fresh one.
  let journalLockLost = false;
  let stopOnLockLost = (): void => undefined;
  const gateway = await startGateway({
    configFile: options.config,
    snapshotSecret: snapshotSecretRef(options.snapshotSecret),
    host: options.host,
    port: options.port,
    adminHost: options.adminHost,
    adminPort: options.adminPort,
    fakeBaseUrl: fake ? fakeBaseUrls(fake.url) : undefined,
    logger,
    redisUrl: redisUrlWithPassword(process.env.GANTRY_REDIS_URL, process.env.GANTRY_REDIS_PASSWORD),
    milvusAddress: process.env.GANTRY_MILVUS_ADDRESS || undefined,
    bodyLimitBytes: options.maxBodyBytes,
    maxUploadBytes: options.maxUploadBytes,
    realtime: {
      maxMessageBytes: options.realtimeMaxMessageBytes,
      maxSessionMs: options.realtimeMaxSessionMs,
      idleTimeoutMs: options.realtimeIdleTimeoutMs,
      maxSessionsPerKey: options.realtimeMaxSessionsPerKey,
      maxScannedCharsPerMinute: options.realtimeMaxScannedCharsPerMinute,
    },
    journalDir: options.journalDir,
    journalRetryMs: options.journalRetryMs,
    journalDrainMs: options.journalDrainMs,
    onJournalLockLost: () => {
      journalLockLost = true;
      stopOnLockLost();
    },
    storeWaitMs: options.storeWaitMs,
    batchSweepMs: options.batchSweepMs,
    maxJsonDepth: jsonDepthLimit(process.env.GANTRY_MAX_JSON_DEPTH, 'GANTRY_MAX_JSON_DEPTH'),
    cacheMemory: cacheMemoryFromEnv(process.env),
    limits: {
      receiveTimeoutMs: options.receiveTimeoutMs,
      headersTimeoutMs: options.headersTimeoutMs,
      keepAliveTimeoutMs: options.keepAliveTimeoutMs,
      maxConnections: options.maxConnections,
      adminMaxConnections: options.adminMaxConnections,
      maxPipelinedRequests: options.maxPipelinedRequests,
    },
    preStopMs: options.preStopMs,
    drainTimeoutMs: options.drainTimeoutMs,
  });
  gateway.app.log.info(
    { url: gateway.url, admin: gateway.adminUrl, config: options.config },
    'gantry is serving',
  );
  // SIGTERM (Kubernetes) waits out the pre-stop window; SIGINT (a terminal) drains at once.
  // A second signal of either kind exits without waiting.
  let stopping = false;
  const stop = (preStopMs: number) => () => {
    if (stopping) process.exit(1);
    stopping = true;
    void gateway
      .close({ preStopMs })
      .then(() => fake?.close())
      .then(
        () => {
          logDestination.flushSync();
          process.exit(journalLockLost ? 1 : 0);
        },
        (err: unknown) => {
          console.error(`shutdown failed: ${(err as Error).message}`);
          process.exit(1);
        },
      );
  };
  stopOnLockLost = stop(0);
  if (journalLockLost) stopOnLockLost();
  process.on('SIGTERM', stop(options.preStopMs));
  process.on('SIGINT', stop(0));
}

main().catch((err: unknown) => {
  console.error((err as Error).message);
  process.exit(1);
});
