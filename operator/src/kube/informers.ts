/**
 * One informer per kind plus one for the namespace's Secrets. Each keeps a local cache the
 * reconcile reads, calls `onChange` on any event (level-triggered: the event says only that
 * something changed), and restarts itself after a watch error; a 410 Gone is handled inside
 * the library by re-listing.
 */
import {
  makeInformer,
  type Informer,
  type KubernetesObject,
  type ObjectCache,
  type V1Secret,
} from '@kubernetes/client-node';
import { Kinds, type KindName } from '@gantry/crds';
import type { ObservedObject } from '../world.ts';
import type { KubeClient } from './client.ts';
import { DecodedSecrets } from './secret-data.ts';

type Watched<T extends KubernetesObject> = Informer<T> & ObjectCache<T>;

export interface InformerLog {
  warn(obj: object, msg: string): void;
}

const KIND_NAMES = Object.keys(Kinds) as KindName[];
const RESTART_BASE_MS = 500;
const RESTART_MAX_MS = 30_000;

export class Informers {
  private readonly kinds = new Map<KindName, Watched<KubernetesObject>>();
  private secrets: Watched<V1Secret> | undefined;
  private stopped = false;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly decoded = new DecodedSecrets();

  constructor(
    private readonly kube: KubeClient,
    private readonly onChange: () => void,
    private readonly log: InformerLog,
  ) {}

  async start(): Promise<void> {
    const starts: Promise<void>[] = [];
    for (const kind of KIND_NAMES) {
      const informer = makeInformer<KubernetesObject>(
        this.kube.config,
        this.kube.kindPath(kind),
        () => this.kube.listKind(kind) as never,
      );
      this.kinds.set(kind, informer);
      starts.push(this.watch(kind, informer));
    }
    this.secrets = makeInformer<V1Secret>(
      this.kube.config,
      `/api/v1/namespaces/${this.kube.namespace}/secrets`,
      () => this.kube.core.listNamespacedSecret({ namespace: this.kube.namespace }),
    );
    starts.push(this.watch('Secret', this.secrets));
    await Promise.all(starts);
  }

  private async watch<T extends KubernetesObject>(name: string, informer: Watched<T>): Promise<void> {
    let failures = 0;
    for (const verb of ['add', 'update', 'delete'] as const)
      informer.on(verb, () => {
        failures = 0;
        this.onChange();
      });
    informer.on('error', (err: unknown) => {
      if (this.stopped) return;
      failures++;
      const delay = Math.min(RESTART_MAX_MS, RESTART_BASE_MS * 2 ** (failures - 1));
      this.log.warn(
        { informer: name, err: (err as Error)?.message, retryInMs: delay },
        'watch failed; restarting',
      );
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        if (!this.stopped) informer.start().catch(() => undefined);
      }, delay);
      this.timers.add(timer);
    });
    await informer.start();
  }

  /** The cached objects of every kind, as reconcile reads them. */
  objects(): ObservedObject[] {
    const out: ObservedObject[] = [];
    for (const [kind, informer] of this.kinds)
      for (const o of informer.list(this.kube.namespace)) {
        const raw = o as KubernetesObject & { spec?: unknown; status?: ObservedObject['status'] };
        out.push({
          kind,
          metadata: {
            name: raw.metadata!.name!,
            namespace: raw.metadata!.namespace ?? this.kube.namespace,
            uid: raw.metadata!.uid ?? '',
            generation: raw.metadata!.generation ?? 0,
            ...(raw.metadata!.creationTimestamp
              ? { creationTimestamp: new Date(raw.metadata!.creationTimestamp).toISOString() }
              : {}),
          },
          spec: raw.spec,
          status: raw.status,
        });
      }
    return out;
  }

  /** Secret name → decoded data; a Secret is decoded once per resourceVersion. */
  secretData(): Map<string, Readonly<Record<string, string>>> {
    return this.decoded.decode(this.secrets?.list(this.kube.namespace) ?? []);
  }

  /** Secret name → its labels (the opt-in of credential Secrets is one). */
  secretLabels(): Map<string, Record<string, string>> {
    const out = new Map<string, Record<string, string>>();
    for (const s of this.secrets?.list(this.kube.namespace) ?? [])
      out.set(s.metadata!.name!, { ...(s.metadata?.labels ?? {}) });
    return out;
  }

  /**
   * One Secret's data as the API gives it (base64 values), e.g. the published snapshot's, and
   * its resourceVersion, which changes whenever the data may have.
   */
  rawSecret(name: string): { resourceVersion: string | undefined; data: Record<string, string> } | undefined {
    const s = this.secrets?.list(this.kube.namespace).find((x) => x.metadata?.name === name);
    return s && { resourceVersion: s.metadata?.resourceVersion, data: s.data ?? {} };
  }

  /** Secret name → uid of the ApiKey that controls it, for the key Secrets the operator made. */
  generatedKeys(managedBy: string): Map<string, string> {
    const out = new Map<string, string>();
    for (const s of this.secrets?.list(this.kube.namespace) ?? []) {
      if (s.metadata?.labels?.['app.kubernetes.io/managed-by'] !== managedBy) continue;
      const owner = s.metadata.ownerReferences?.find((r) => r.controller && r.kind === 'ApiKey');
      if (owner) out.set(s.metadata.name!, owner.uid);
    }
    return out;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    await Promise.all([...this.kinds.values(), ...(this.secrets ? [this.secrets] : [])].map((i) => i.stop()));
  }
}
