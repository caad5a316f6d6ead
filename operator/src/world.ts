/**
 * What the operator observes, reduced to what reconcile needs: the five kinds of one
 * namespace and the data of the Secrets they reference. Plain data, no client objects, so
 * the plan is a pure function of it.
 */
import type { KindName, Manifest } from '@gantry/crds';

export interface ObjectMeta {
  name: string;
  namespace: string;
  uid: string;
  generation: number;
  /** RFC 3339; orders objects by age (which fit an over-full snapshot, which key is older). */
  creationTimestamp?: string;
}

export interface Condition {
  type: 'Ready';
  status: 'True' | 'False';
  reason: string;
  message: string;
  observedGeneration: number;
  lastTransitionTime?: string;
}

export interface ObservedObject {
  kind: KindName;
  metadata: ObjectMeta;
  spec: unknown;
  status?: { conditions?: Condition[] } & Record<string, unknown>;
}

export interface World {
  namespace: string;
  objects: readonly ObservedObject[];
  /** Secret name → decoded data (key → UTF-8 value). */
  secrets: ReadonlyMap<string, Readonly<Record<string, string>>>;
  /**
   * Secret name → its labels. A Secret serves as provider credentials, or as an ApiKey's key,
   * only when its owner labelled it for that use (CREDENTIALS_LABEL); a missing entry is a
   * Secret without labels.
   */
  secretLabels: ReadonlyMap<string, Readonly<Record<string, string>>>;
  /**
   * The Secret the snapshot is published into. It holds every provider credential, so no
   * object may reference it (and an ApiKey hashing it would change it with every publish).
   */
  snapshotSecret: string;
  /** Secret name → uid of the ApiKey whose generated key it holds (the operator made it). */
  generatedKeys: ReadonlyMap<string, string>;
  /**
   * The variables the data-plane pods offer to `apiKeyEnv` (GANTRY_PROVIDER_ENV, which the chart
   * renders into both Deployments); the pods see no other. Absent: none.
   */
  providerEnv?: ReadonlySet<string> | undefined;
  /** The most one object may publish (MAX_OBJECT_BYTES when absent). */
  maxObjectBytes?: number | undefined;
  /**
   * What the snapshot Secret holds now, when it can be read: the base when over the limit, and
   * needed only then. Reading it is a gunzip and a parse of the whole snapshot, so plan asks for
   * it only over the limit.
   */
  published?: (() => Published | undefined) | undefined;
}

export interface Published {
  manifests: readonly Manifest[];
  credentials: Readonly<Record<string, string>>;
  /** Content hash of the two (contentHash): what a remembered selection is keyed by. */
  hash: string;
}

export const objectKey = (kind: KindName, name: string): string => `${kind}/${name}`;

/** Code-unit order, as `<` compares (not the locale's collation, which may skip punctuation). */
export const textOrder = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Older first, by creationTimestamp: RFC 3339 in UTC, so text order is age order, to the second
 * (ties are the caller's to break). A missing timestamp counts as oldest.
 */
export const olderFirst = (a: string | undefined, b: string | undefined): number =>
  textOrder(a ?? '', b ?? '');
