/**
 * The few API calls the operator makes, on @kubernetes/client-node. Everything else in the
 * operator talks to this small surface, so the controller's glue reads as intent.
 */
import {
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type V1Lease,
  type V1Secret,
} from '@kubernetes/client-node';
import { KIND_INFO, type KindName } from '@gantry/crds';
import type { Condition } from '../world.ts';

export const GROUP = 'gantry.dev';
export const VERSION = 'v1alpha1';
export const FIELD_MANAGER = 'gantry-operator';

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** HTTP status of a failed API call, or undefined for transport errors. */
export const statusOf = (err: unknown): number | undefined => {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'number' ? code : undefined;
};

/**
 * What the apiserver said about a failed call, stable across retries: the client's own error
 * message also carries the response headers (a fresh audit id and date each time), which in a
 * condition would re-patch the status on every reconcile.
 */
export const apiErrorText = (err: unknown): string => {
  const code = statusOf(err);
  const body = (err as { body?: unknown }).body;
  let said: unknown;
  if (typeof body === 'string')
    try {
      said = (JSON.parse(body) as { message?: unknown }).message;
    } catch {
      said = undefined;
    }
  else if (typeof body === 'object' && body !== null) said = (body as { message?: unknown }).message;
  if (typeof said === 'string') return code === undefined ? said : `${code} ${said}`;
  return code === undefined ? String((err as Error).message ?? err) : `HTTP ${code}`;
};

export class KubeClient {
  readonly core: CoreV1Api;
  readonly custom: CustomObjectsApi;
  readonly coordination: CoordinationV1Api;

  constructor(
    readonly config: KubeConfig,
    readonly namespace: string,
  ) {
    this.core = config.makeApiClient(CoreV1Api);
    this.custom = config.makeApiClient(CustomObjectsApi);
    this.coordination = config.makeApiClient(CoordinationV1Api);
  }

  listKind(kind: KindName): Promise<{ items: unknown[]; metadata?: { resourceVersion?: string } }> {
    return this.custom.listNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: this.namespace,
      plural: KIND_INFO[kind].plural,
    }) as Promise<{ items: unknown[]; metadata?: { resourceVersion?: string } }>;
  }

  kindPath(kind: KindName): string {
    return `/apis/${GROUP}/${VERSION}/namespaces/${this.namespace}/${KIND_INFO[kind].plural}`;
  }

  async patchStatus(kind: KindName, name: string, status: Record<string, unknown>): Promise<void> {
    await this.custom.patchNamespacedCustomObjectStatus(
      {
        group: GROUP,
        version: VERSION,
        namespace: this.namespace,
        plural: KIND_INFO[kind].plural,
        name,
        body: { status },
        fieldManager: FIELD_MANAGER,
      },
      mergePatch,
    );
  }

  async readSecret(name: string): Promise<V1Secret | undefined> {
    try {
      return await this.core.readNamespacedSecret({ name, namespace: this.namespace });
    } catch (err) {
      if (statusOf(err) === 404) return undefined;
      throw err;
    }
  }

  /** Create, or replace at the given resourceVersion (a concurrent writer gets a 409). */
  async writeSecret(secret: V1Secret): Promise<void> {
    if (secret.metadata?.resourceVersion)
      await this.core.replaceNamespacedSecret({
        name: secret.metadata.name!,
        namespace: this.namespace,
        body: secret,
        fieldManager: FIELD_MANAGER,
      });
    else
      await this.core.createNamespacedSecret({
        namespace: this.namespace,
        body: secret,
        fieldManager: FIELD_MANAGER,
      });
  }

  async readLease(name: string): Promise<V1Lease | undefined> {
    try {
      return await this.coordination.readNamespacedLease({ name, namespace: this.namespace });
    } catch (err) {
      if (statusOf(err) === 404) return undefined;
      throw err;
    }
  }

  async writeLease(lease: V1Lease): Promise<void> {
    if (lease.metadata?.resourceVersion)
      await this.coordination.replaceNamespacedLease({
        name: lease.metadata.name!,
        namespace: this.namespace,
        body: lease,
      });
    else await this.coordination.createNamespacedLease({ namespace: this.namespace, body: lease });
  }
}

export type { Condition };
