/**
 * `npm start`: run the data plane on a gantry.yaml of manifests. With no provider key set,
 * the deployments are served by the built-in fake provider, so it works offline.
 */
import { parseArgs } from 'node:util';
import { cacheMemoryFromEnv } from './stores/cache-bounds-env.ts';
import { jsonDepthLimit } from './formats/json-depth.ts';
import { fakeBaseUrls, startGateway } from './gateway.ts';

const { values } = parseArgs({
  options: {
    config: { type: 'string', default: process.env.GANTRY_CONFIG ?? 'gantry.yaml' },
    host: { type: 'string', default: process.env.GANTRY_HOST ?? '0.0.0.0' },
    port: { type: 'string', default: process.env.GANTRY_PORT ?? '8080' },
    'admin-host': { type: 'string', default: process.env.GANTRY_ADMIN_HOST ?? '0.0.0.0' },
    'admin-port': { type: 'string', default: process.env.GANTRY_ADMIN_PORT ?? '9090' },
    'fake-provider': { type: 'string', default: process.env.GANTRY_FAKE_PROVIDER ?? 'auto' },
    // In a cluster: `namespace/name` of the Secret the operator publishes the snapshot into.
    'snapshot-secret': { type: 'string', default: process.env.GANTRY_SNAPSHOT_SECRET ?? '' },
  },
});

const logger = {
  level: process.env.GANTRY_LOG_LEVEL ?? 'info',
  redact: ['req.headers.authorization', 'req.headers["x-api-key"]'],
};

/** The chart passes the Redis password from a Secret on its own, never inside a plain URL value. */
function redisUrlWithPassword(url: string | undefined, password: string | undefined): string | undefined {
  if (!url) return undefined;
  if (!password) return url;
  const u = new URL(url);
  u.password = encodeURIComponent(password);
  return u.toString();
}

function snapshotSecretRef(value: string): { namespace: string; name: string } | undefined {
  if (value === '') return undefined;
  const [namespace, name, ...rest] = value.split('/');
  if (!namespace || !name || rest.length > 0)
    throw new Error(`--snapshot-secret must be namespace/name, got ${value}`);
  return { namespace, name };
}

async function main(): Promise<void> {
  // Loaded only when used, so a production data plane never carries the fake.
  const fake =
    values['fake-provider'] === 'off'
      ? undefined
      : await (await import('./fake-provider/index.ts')).startFakeProvider({ port: 0, host: '127.0.0.1' });
  const gateway = await startGateway({
    configFile: values.config,
    snapshotSecret: snapshotSecretRef(values['snapshot-secret']),
    host: values.host,
    port: Number(values.port),
    adminHost: values['admin-host'],
    adminPort: Number(values['admin-port']),
    fakeBaseUrl: fake ? fakeBaseUrls(fake.url) : undefined,
    logger,
    redisUrl: redisUrlWithPassword(process.env.GANTRY_REDIS_URL, process.env.GANTRY_REDIS_PASSWORD),
    milvusAddress: process.env.GANTRY_MILVUS_ADDRESS || undefined,
    bodyLimitBytes: process.env.GANTRY_MAX_BODY_BYTES ? Number(process.env.GANTRY_MAX_BODY_BYTES) : undefined,
    journalDir: process.env.GANTRY_JOURNAL_DIR || undefined,
    journalRetryMs: process.env.GANTRY_JOURNAL_RETRY_MS
      ? Number(process.env.GANTRY_JOURNAL_RETRY_MS)
      : undefined,
    maxJsonDepth: jsonDepthLimit(process.env.GANTRY_MAX_JSON_DEPTH, 'GANTRY_MAX_JSON_DEPTH'),
    cacheMemory: cacheMemoryFromEnv(process.env),
  });
  gateway.app.log.info(
    { url: gateway.url, admin: gateway.adminUrl, config: values.config },
    'gantry is serving',
  );
  const stop = async () => {
    await gateway.close();
    await fake?.close();
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((err: unknown) => {
  console.error((err as Error).message);
  process.exit(1);
});
