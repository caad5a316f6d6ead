/**
 * The Gantry operator: watches the five gantry.dev kinds (and the Secrets they name) in one
 * namespace and publishes the data plane's snapshot there. Run two replicas; a Lease picks
 * the one that writes.
 */
import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { PROVIDER_ENV_VAR, providerEnvNames } from '@gantry/dataplane/config/provider-env';
import { Controller } from './controller.ts';
import { startHealthServer } from './health/server.ts';
import { KubeClient } from './kube/client.ts';
import { MAX_OBJECT_BYTES } from './plan/object-size.ts';
import { SpendReporter } from './spend/reporter.ts';

function withPassword(url: string, password: string | undefined): string | undefined {
  if (!url) return undefined;
  if (!password) return url;
  const u = new URL(url);
  u.password = encodeURIComponent(password);
  return u.toString();
}

const log = {
  info: (obj: object, msg: string) => console.log(JSON.stringify({ level: 'info', msg, ...obj })),
  warn: (obj: object, msg: string) => console.log(JSON.stringify({ level: 'warn', msg, ...obj })),
  error: (obj: object, msg: string) => console.log(JSON.stringify({ level: 'error', msg, ...obj })),
};

function options() {
  const { values } = parseArgs({
    strict: true,
    options: {
      namespace: {
        type: 'string',
        default: process.env.GANTRY_NAMESPACE ?? process.env.POD_NAMESPACE ?? 'default',
      },
      identity: { type: 'string', default: process.env.POD_NAME ?? `${hostname()}-${process.pid}` },
      'snapshot-secret': { type: 'string', default: process.env.GANTRY_SNAPSHOT_SECRET ?? 'gantry-snapshot' },
      'lease-name': { type: 'string', default: 'gantry-operator' },
      'lease-duration': { type: 'string', default: '15' },
      // The Redis the data-plane pods share: ApiKey status then shows spend and last use.
      'redis-url': { type: 'string', default: process.env.GANTRY_REDIS_URL ?? '' },
      'spend-interval': { type: 'string', default: '30' },
      // Where kubelet's probes reach /healthz and /readyz; 0 turns the listener off.
      'health-port': { type: 'string', default: process.env.GANTRY_OPERATOR_HEALTH_PORT ?? '8081' },
      // The most one object may publish (plain JSON bytes): past it, Ready=False ObjectTooLarge.
      'max-object-bytes': { type: 'string', default: String(MAX_OBJECT_BYTES) },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(
      'gantry-operator [--namespace NS] [--identity ID] [--snapshot-secret NAME] [--lease-name NAME] [--lease-duration SECONDS] [--health-port PORT] [--max-object-bytes BYTES]',
    );
    process.exit(0);
  }
  const leaseDuration = Number(values['lease-duration']);
  if (!Number.isInteger(leaseDuration) || leaseDuration < 1)
    throw new Error(`--lease-duration must be a whole number of seconds, got ${values['lease-duration']}`);
  const spendInterval = Number(values['spend-interval']);
  if (!Number.isInteger(spendInterval) || spendInterval < 5)
    throw new Error(`--spend-interval must be at least 5 seconds, got ${values['spend-interval']}`);
  const healthPort = Number(values['health-port']);
  if (!Number.isInteger(healthPort) || healthPort < 0 || healthPort > 65535)
    throw new Error(`--health-port must be a port number (0 to disable), got ${values['health-port']}`);
  const maxObjectBytes = Number(values['max-object-bytes']);
  if (!Number.isInteger(maxObjectBytes) || maxObjectBytes < 1024)
    throw new Error(
      `--max-object-bytes must be a whole number of bytes, at least 1024, got ${values['max-object-bytes']}`,
    );
  return { ...values, leaseDuration, spendInterval, healthPort, maxObjectBytes };
}

async function main(): Promise<void> {
  const o = options();
  const config = new KubeConfig();
  config.loadFromDefault();
  const kube = new KubeClient(config, o.namespace);
  const redisUrl = withPassword(o['redis-url'], process.env.GANTRY_REDIS_PASSWORD);
  const controller = new Controller({
    kube,
    spend: redisUrl ? new SpendReporter({ kube, redisUrl, intervalMs: o.spendInterval * 1000 }) : undefined,
    spendIntervalMs: o.spendInterval * 1000,
    identity: o.identity,
    log,
    snapshotSecret: o['snapshot-secret'],
    providerEnv: providerEnvNames(process.env[PROVIDER_ENV_VAR]),
    maxObjectBytes: o.maxObjectBytes,
    leaseName: o['lease-name'],
    leaseDurationSeconds: o.leaseDuration,
  });
  // Up before the first list, so a slow API server shows as not-ready rather than dead.
  const health = o.healthPort
    ? await startHealthServer(o.healthPort, () => controller.healthFacts())
    : undefined;
  await controller.start();
  log.info({ namespace: o.namespace, identity: o.identity, healthPort: o.healthPort }, 'operator started');
  const stop = async () => {
    await controller.stop();
    health?.close();
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((err: unknown) => {
  console.error((err as Error).message);
  process.exit(1);
});
