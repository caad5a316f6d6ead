/**
 * Reconcile as one pure function: the observed objects and Secrets in, the snapshot every
 * data-plane pod should serve and each object's Ready condition out. A broken object is left
 * out of the snapshot with a reason; the rest keeps serving. The data plane's own compile
 * step is the final judge, so the operator never publishes what a pod would reject.
 */
import { compileValidators, formatAjvErrors, type KindName, type Manifest } from '@gantry/crds';
import { createHash } from 'node:crypto';
import { compile, type LocatedManifest } from '@gantry/dataplane/config/compile';
import { contentHash, PUBLISHED_FORMAT, type PublishedSnapshot } from '@gantry/dataplane/config/published';
import { objectKey, type ObservedObject, type World } from '../world.ts';

export interface ReadyVerdict {
  kind: KindName;
  name: string;
  generation: number;
  ready: boolean;
  /** CamelCase, as Kubernetes conditions spell reasons. */
  reason: string;
  message: string;
}

/** An ApiKey whose Secret does not exist yet: the shell generates a key and creates it. */
export interface KeyToGenerate {
  apiKey: ObservedObject['metadata'];
  secretName: string;
  dataKey: string;
}

export interface Plan {
  manifests: Manifest[];
  credentials: Record<string, string>;
  hash: string;
  verdicts: ReadyVerdict[];
  generate: KeyToGenerate[];
  /** False when the snapshot would not fit its Secret: the last published one keeps serving. */
  publishable: boolean;
}

/**
 * The apiserver refuses a Secret whose data adds up to more than 1 MiB. The margin leaves room
 * for the version's digits, which the size is measured without.
 */
export const MAX_SNAPSHOT_BYTES = 1024 * 1024 - 64;

/** The text published into the snapshot Secret, exactly as the data plane reads it. */
export function snapshotText(p: Pick<Plan, 'hash' | 'manifests' | 'credentials'>, version: number): string {
  const doc: PublishedSnapshot = {
    format: PUBLISHED_FORMAT,
    version,
    hash: p.hash,
    manifests: p.manifests,
    credentials: p.credentials,
  };
  return JSON.stringify(doc);
}

export const API_VERSION = 'gantry.dev/v1alpha1';
export const DEFAULT_KEY_FIELD = 'key';

const validators = compileValidators();

const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');

interface Candidate {
  obj: ObservedObject;
  manifest: Manifest;
}

export function plan(world: World): Plan {
  const verdicts = new Map<string, ReadyVerdict>();
  const fail = (obj: ObservedObject, reason: string, message: string) =>
    verdicts.set(objectKey(obj.kind, obj.metadata.name), {
      kind: obj.kind,
      name: obj.metadata.name,
      generation: obj.metadata.generation,
      ready: false,
      reason,
      message,
    });
  const credentials: Record<string, string> = {};
  const generate: KeyToGenerate[] = [];
  const candidates: Candidate[] = [];

  for (const obj of [...world.objects].sort(byKindAndName)) {
    const manifest = {
      apiVersion: API_VERSION,
      kind: obj.kind,
      metadata: { name: obj.metadata.name, namespace: obj.metadata.namespace },
      spec: obj.spec,
    } as Manifest;
    const validate = validators[obj.kind];
    if (!validate(manifest)) {
      fail(obj, 'InvalidSpec', formatAjvErrors(validate.errors ?? []).join('; '));
      continue;
    }
    const resolved = resolveSecrets(world, obj, manifest, credentials, generate);
    if (resolved.ok) candidates.push({ obj, manifest: resolved.manifest });
    else fail(obj, resolved.reason, resolved.message);
  }
  rejectDuplicateKeys(candidates, fail);

  // The data plane's compile decides the rest (references, fallbacks, policies). Objects it
  // names are left out and compiled again, until what remains compiles cleanly.
  let included = candidates.filter((c) => !verdicts.has(objectKey(c.obj.kind, c.obj.metadata.name)));
  for (let round = 0; round <= candidates.length; round++) {
    const items: LocatedManifest[] = included.map((c) => ({
      manifest: c.manifest,
      where: objectKey(c.obj.kind, c.obj.metadata.name),
    }));
    const result = compile(items, {
      env: {},
      version: 1,
      source: world.namespace,
      credentials: new Map(Object.entries(credentials)),
      // apiKeyEnv names a variable of the data-plane pods, which the operator cannot see.
      fakeBaseUrl: () => 'http://unused.invalid',
    });
    if (result.ok) break;
    const failed = new Set<string>();
    for (const e of result.errors) {
      const at = e.indexOf(': ');
      const where = at > 0 ? e.slice(0, at) : '';
      const c = included.find((x) => objectKey(x.obj.kind, x.obj.metadata.name) === where);
      if (!c) continue;
      failed.add(where);
      fail(c.obj, reasonOf(e), e.slice(at + 2));
    }
    if (failed.size === 0) {
      // Nothing attributable: publish nothing new rather than something a pod rejects.
      for (const c of included) fail(c.obj, 'CompileError', result.errors.join('; '));
      included = [];
      break;
    }
    included = included.filter((c) => !failed.has(objectKey(c.obj.kind, c.obj.metadata.name)));
  }

  const models = new Set(
    included
      .filter((c) => c.obj.kind === 'ModelDeployment')
      .map((c) => (c.manifest.spec as { model: string }).model),
  );
  for (const c of included) {
    const key = objectKey(c.obj.kind, c.obj.metadata.name);
    const missing =
      c.obj.kind === 'Tenant'
        ? (c.manifest.spec as { models: string[] }).models.filter((m) => m !== '*' && !models.has(m))
        : [];
    verdicts.set(key, {
      kind: c.obj.kind,
      name: c.obj.metadata.name,
      generation: c.obj.metadata.generation,
      // A tenant keeps serving the models that exist; the missing ones are reported.
      ready: missing.length === 0,
      reason: missing.length === 0 ? 'Published' : 'ModelNotFound',
      message:
        missing.length === 0
          ? 'included in the published snapshot'
          : `no ModelDeployment serves ${missing.join(', ')}; the tenant's other models are served`,
    });
  }
  const manifests = included.map((c) => c.manifest);
  const usedCredentials = Object.fromEntries(
    Object.entries(credentials).filter(([name]) =>
      included.some((c) => c.obj.kind === 'ModelDeployment' && c.obj.metadata.name === name),
    ),
  );
  const hash = contentHash(manifests, usedCredentials);
  const bytes = Buffer.byteLength(snapshotText({ hash, manifests, credentials: usedCredentials }, 0));
  const publishable = bytes <= MAX_SNAPSHOT_BYTES;
  // Which object tipped it over is not knowable, so every published one says so: loud, and
  // nothing half-published.
  if (!publishable)
    for (const c of included)
      verdicts.set(objectKey(c.obj.kind, c.obj.metadata.name), {
        kind: c.obj.kind,
        name: c.obj.metadata.name,
        generation: c.obj.metadata.generation,
        ready: false,
        reason: 'SnapshotTooLarge',
        message: `the snapshot would be ${bytes} bytes, over the ${MAX_SNAPSHOT_BYTES} a Secret holds; the last published snapshot keeps serving`,
      });
  return {
    manifests,
    credentials: usedCredentials,
    hash,
    verdicts: [...verdicts.values()].sort((a, b) => byKindAndName(a, b)).map(clipMessage),
    generate,
    publishable,
  };
}

type Resolved = { ok: true; manifest: Manifest } | { ok: false; reason: string; message: string };

function resolveSecrets(
  world: World,
  obj: ObservedObject,
  manifest: Manifest,
  credentials: Record<string, string>,
  generate: KeyToGenerate[],
): Resolved {
  if (manifest.kind === 'ModelDeployment') {
    const ref = manifest.spec.credentialsSecretRef;
    if (ref === undefined) return { ok: true, manifest };
    // The credential travels to the deployment's baseUrl, which its author chooses.
    if (ref.name === world.snapshotSecret || world.generatedKeys.has(ref.name))
      return {
        ok: false,
        reason: 'SecretNotAllowed',
        message: `Secret ${ref.name} is ${ref.name === world.snapshotSecret ? 'the published snapshot' : "an ApiKey's generated key"}; spec.credentialsSecretRef may not name it`,
      };
    const secret = world.secrets.get(ref.name);
    if (!secret) return { ok: false, reason: 'SecretNotFound', message: `Secret ${ref.name} not found` };
    const value = secret[ref.key];
    if (value === undefined || value === '')
      return { ok: false, reason: 'SecretKeyNotFound', message: `Secret ${ref.name} has no key ${ref.key}` };
    credentials[manifest.metadata.name] = value;
    return { ok: true, manifest };
  }
  if (manifest.kind !== 'ApiKey') return { ok: true, manifest };
  const { secretRef, ...spec } = manifest.spec;
  if (secretRef === undefined) {
    if (spec.keyHash === undefined)
      return { ok: false, reason: 'InvalidSpec', message: 'spec.secretRef (or spec.keyHash) is required' };
    return { ok: true, manifest };
  }
  if (secretRef.name === world.snapshotSecret)
    return {
      ok: false,
      reason: 'SecretNotAllowed',
      message: `Secret ${secretRef.name} is the published snapshot; spec.secretRef may not name it`,
    };
  // Another ApiKey's key would be served under this one's tenant, budget and role.
  const owner = world.generatedKeys.get(secretRef.name);
  if (owner !== undefined && owner !== obj.metadata.uid)
    return {
      ok: false,
      reason: 'SecretNotAllowed',
      message: `Secret ${secretRef.name} holds the key generated for another ApiKey; spec.secretRef may not name it`,
    };
  const dataKey = secretRef.key ?? DEFAULT_KEY_FIELD;
  const secret = world.secrets.get(secretRef.name);
  if (!secret) {
    generate.push({ apiKey: obj.metadata, secretName: secretRef.name, dataKey });
    return { ok: false, reason: 'KeyPending', message: `generating a key into Secret ${secretRef.name}` };
  }
  const value = secret[dataKey];
  // Never overwrite a Secret someone else made: report instead.
  if (value === undefined || value === '')
    return {
      ok: false,
      reason: 'SecretKeyNotFound',
      message: `Secret ${secretRef.name} has no key ${dataKey}`,
    };
  return { ok: true, manifest: { ...manifest, spec: { ...spec, keyHash: sha256(value) } } };
}

/**
 * ApiKeys whose key Secret the apiserver refused to create (quota, RBAC, a name rule the schema
 * missed): each says why on its own condition, and the retry is the next reconcile's.
 */
export function withGenerationFailures(
  verdicts: readonly ReadyVerdict[],
  failures: ReadonlyMap<string, string>,
): ReadyVerdict[] {
  return verdicts.map((v) => {
    const err = failures.get(v.name);
    if (v.kind !== 'ApiKey' || err === undefined) return v;
    return clipMessage({
      ...v,
      ready: false,
      reason: 'KeyGenerationFailed',
      message: `could not create the key Secret: ${err}`,
    });
  });
}

/** Two ApiKeys with one key would make the second one's tenant ambiguous: the later name loses. */
function rejectDuplicateKeys(
  candidates: readonly Candidate[],
  fail: (obj: ObservedObject, reason: string, message: string) => void,
): void {
  const byHash = new Map<string, string>();
  for (const c of candidates) {
    if (c.manifest.kind !== 'ApiKey') continue;
    const hash = c.manifest.spec.keyHash!;
    const first = byHash.get(hash);
    if (first === undefined) byHash.set(hash, c.obj.metadata.name);
    else fail(c.obj, 'DuplicateKey', `the same key is already used by ApiKey ${first}`);
  }
}

/**
 * A condition's message is for a person reading `kubectl describe`. Unclipped, a tenant listing
 * thousands of missing models wrote them all into its status, which could push the object past
 * what etcd stores, so the status patch failed on every reconcile.
 */
export const MAX_MESSAGE_CHARS = 1024;

function clipMessage(v: ReadyVerdict): ReadyVerdict {
  if (v.message.length <= MAX_MESSAGE_CHARS) return v;
  const more = ` ... (${v.message.length - MAX_MESSAGE_CHARS} more characters)`;
  return { ...v, message: v.message.slice(0, MAX_MESSAGE_CHARS - more.length) + more };
}

function reasonOf(error: string): string {
  if (/Tenant .* not found/.test(error)) return 'TenantNotFound';
  if (/(GuardrailPolicy|CachePolicy) .* not found/.test(error)) return 'PolicyNotFound';
  if (/no ModelDeployment serves/.test(error)) return 'ModelNotFound';
  if (/already defined/.test(error)) return 'Duplicate';
  return 'Invalid';
}

function byKindAndName(
  a: { kind: string; name?: string; metadata?: { name: string } },
  b: { kind: string; name?: string; metadata?: { name: string } },
): number {
  const an = a.name ?? a.metadata?.name ?? '';
  const bn = b.name ?? b.metadata?.name ?? '';
  return a.kind.localeCompare(b.kind) || an.localeCompare(bn);
}
