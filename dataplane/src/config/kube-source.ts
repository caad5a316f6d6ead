/**
 * In a cluster: watch the one Secret the operator publishes the snapshot into, through the
 * API (no kubelet-refreshed volume, so a change lands in about a watch round trip), and swap
 * each valid new version in; an invalid one is rejected and the last good snapshot serves.
 * The client library is loaded only here, so standalone pods never pay for it.
 */
import type { V1Secret } from '@kubernetes/client-node';
import type { CompileOptions } from './compile.ts';
import { compilePublished, publishedText } from './published.ts';
import type { Snapshot } from './snapshot.ts';
import type { ConfigLogger, ConfigStore } from './store.ts';

export interface SnapshotSecretRef {
  namespace: string;
  name: string;
}

/** What a pod serves before the operator's first snapshot arrives: nothing (and not ready). */
export function emptySnapshot(ref: SnapshotSecretRef): Snapshot {
  return {
    version: 0,
    source: `secret ${ref.namespace}/${ref.name}`,
    loadedAt: new Date(),
    models: new Map(),
    keys: new Map(),
    tenants: new Map(),
  };
}

/**
 * An informer callback that cannot throw: a throw during the informer's first list ends the
 * watch for good (the library's start() rejects and is not retried), so a pod booting on a bad
 * snapshot would never load a later good one.
 */
export function neverThrows<T>(
  load: (value: T) => void,
  onError: (err: unknown) => void,
): (value: T) => void {
  return (value) => {
    try {
      load(value);
    } catch (err) {
      onError(err);
    }
  };
}

/** Load one version of the snapshot Secret's data into the store; a bad one leaves the last good serving. */
export function loadSnapshotSecret(
  data: Readonly<Record<string, string>> | undefined,
  store: ConfigStore,
  opts: Pick<CompileOptions, 'env' | 'fakeBaseUrl'> & { source: string },
  log: ConfigLogger,
): void {
  const { source } = opts;
  const read = publishedText(data);
  if (!read.ok) {
    log.error({ source }, `snapshot rejected: ${read.error}; previous snapshot keeps serving`);
    return;
  }
  const result = compilePublished(read.text, opts);
  if (result.ok && result.snapshot.version === store.current().version) return;
  // The operator's content hash stands for the file hash standalone pods report.
  const event = store.apply(result.ok ? { ...result, sha256: result.published?.hash } : result);
  if (event.ok) {
    // A deployment this pod cannot serve (its apiKeyEnv unset here) is named, not fatal.
    if (result.ok) for (const w of result.warnings) log.warn({ source, version: event.version }, w);
    log.info({ version: event.version, source }, 'snapshot loaded');
  } else log.error({ errors: event.errors, source }, 'snapshot rejected; previous snapshot keeps serving');
}

export async function watchSnapshotSecret(
  ref: SnapshotSecretRef,
  store: ConfigStore,
  opts: Pick<CompileOptions, 'env' | 'fakeBaseUrl'>,
  log: ConfigLogger,
): Promise<() => Promise<void>> {
  const k8s = await import('@kubernetes/client-node');
  const kc = new k8s.KubeConfig();
  kc.loadFromDefault();
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const fieldSelector = `metadata.name=${ref.name}`;
  const source = `secret ${ref.namespace}/${ref.name}`;

  const load = (secret: { data?: Record<string, string> }) =>
    loadSnapshotSecret(secret.data, store, { ...opts, source }, log);

  let stopped = false;
  let failures = 0;
  const informer = new k8s.ListWatch<V1Secret>(
    `/api/v1/namespaces/${ref.namespace}/secrets`,
    new k8s.Watch(kc),
    () => core.listNamespacedSecret({ namespace: ref.namespace, fieldSelector }),
    false,
    undefined,
    fieldSelector,
  );
  const guarded = neverThrows(load, (err) =>
    log.error({ source, err: (err as Error).message }, 'snapshot rejected; previous snapshot keeps serving'),
  );
  const safeLoad = (s: V1Secret) => {
    failures = 0;
    guarded(s);
  };
  informer.on('add', safeLoad);
  informer.on('update', safeLoad);
  let timer: NodeJS.Timeout | undefined;
  informer.on('error', (err: unknown) => {
    if (stopped) return;
    const delay = Math.min(30_000, 500 * 2 ** failures++);
    log.warn({ source, err: (err as Error)?.message, retryInMs: delay }, 'snapshot watch failed; restarting');
    timer = setTimeout(() => void informer.start().catch(() => undefined), delay);
  });
  // A missing Secret or an unreachable API at boot is retried like any watch error.
  await informer.start().catch(() => undefined);
  return async () => {
    stopped = true;
    clearTimeout(timer);
    await informer.stop();
  };
}
