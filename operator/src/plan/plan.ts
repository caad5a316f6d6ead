/**
 * Reconcile as one pure function: the observed objects and Secrets in, the snapshot every
 * data-plane pod should serve and each object's Ready condition out. A broken object is left
 * out of the snapshot with a reason; the rest keeps serving. The data plane's own compile
 * step is the final judge, so the operator never publishes what a pod would reject.
 */
import { compileValidators, formatAjvErrors, type KindName, type Manifest } from '@gantry/crds';
import { createHash } from 'node:crypto';
import {
  API_KEY_ENV_NOT_ALLOWED,
  compile,
  isGatewaySetting,
  type LocatedManifest,
} from '@gantry/dataplane/config/compile';
import { PROVIDER_ENV_VAR } from '@gantry/dataplane/config/provider-env';
import {
  objectKey,
  olderFirst,
  textOrder,
  type ObservedObject,
  type Published,
  type World,
} from '../world.ts';
import { PlanMemo } from './memo.ts';
import { MAX_OBJECT_BYTES, objectTooLarge } from './object-size.ts';
import {
  fitted,
  MAX_SNAPSHOT_BYTES,
  publication,
  sizeAgainstLimit,
  withinLimit,
  type Entry,
} from './publication.ts';

export { MAX_OBJECT_BYTES } from './object-size.ts';
export {
  MAX_SNAPSHOT_BYTES,
  readPublished,
  sizeAgainstLimit,
  snapshotSecretData,
  snapshotText,
} from './publication.ts';

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
  /**
   * Set when everything would not fit its Secret: what is published is then the last snapshot
   * with deletions and revocations applied, plus what fits of the rest (oldest first).
   */
  tooLarge?: { bytes: number; leftOut: number };
}

export const API_VERSION = 'gantry.dev/v1alpha1';
export const DEFAULT_KEY_FIELD = 'key';
/**
 * The label a Secret's owner sets to let the operator read it for an object, its value the one
 * use allowed: `provider` for a ModelDeployment's provider credentials, `apikey` for a user-made
 * ApiKey key. The operator can read every Secret of its namespace; without this opt-in, whoever
 * may write a ModelDeployment could have any of them (a Redis password, a TLS key) sent to a
 * baseUrl of their choosing, and whoever may write ApiKeys could test guesses of one against
 * DuplicateKey. One value for both let a ModelDeployment take a labelled gateway key as its
 * provider credential whenever no ApiKey named that Secret at the moment (created before its
 * ApiKey, or during a GitOps replace), and send it upstream.
 */
export const CREDENTIALS_LABEL = 'gantry.dev/credentials';
export const CREDENTIALS_USE = { provider: 'provider', apikey: 'apikey' } as const;
export type CredentialsUse = keyof typeof CREDENTIALS_USE;

const validators = compileValidators();

const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');

interface Candidate {
  obj: ObservedObject;
  manifest: Manifest;
}

/**
 * `memo` is what this operator remembers from its previous plans (the controller keeps one);
 * without it nothing is remembered, and the result is the same.
 */
export function plan(world: World, memo: PlanMemo = new PlanMemo()): Plan {
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

  const keyHolders = apiKeySecrets(world.objects);
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
    const resolved = resolveSecrets(world, obj, manifest, credentials, generate, keyHolders);
    if (!resolved.ok) {
      fail(obj, resolved.reason, resolved.message);
      continue;
    }
    // Measured as published (an ApiKey's hash, not its Secret's name), before compile, so what
    // depends on it fails as on any other object left out (an ApiKey's TenantNotFound).
    const credential = obj.kind === 'ModelDeployment' ? credentials[obj.metadata.name] : undefined;
    const large = objectTooLarge(resolved.manifest, credential, world.maxObjectBytes ?? MAX_OBJECT_BYTES);
    if (large !== undefined) fail(obj, 'ObjectTooLarge', large);
    else candidates.push({ obj, manifest: resolved.manifest });
  }
  rejectDuplicateKeys(candidates, fail);

  // The data plane's compile decides the rest (references, fallbacks, policies).
  const settled = settle(
    candidates.filter((c) => !verdicts.has(objectKey(c.obj.kind, c.obj.metadata.name))),
    credentials,
    world.namespace,
  );
  for (const [c, reason, message] of settled.failed) fail(c.obj, reason, message);
  const included = settled.kept;

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
  const desired = included.map((c) => entryOf(c, credentials));
  let out = publication(desired);
  let tooLarge: Plan['tooLarge'];
  // Remembered by content hash: past about 1 MiB of plain JSON, measuring is a gzip of it all.
  const bytes = memo.measure(out.hash, () => sizeAgainstLimit(out));
  if (bytes > MAX_SNAPSHOT_BYTES) {
    const created = new Map(
      included.map((c) => [
        objectKey(c.obj.kind, c.obj.metadata.name),
        c.obj.metadata.creationTimestamp ?? '',
      ]),
    );
    const byKey = new Map(world.objects.map((o) => [objectKey(o.kind, o.metadata.name), o]));
    // Old and new versions side by side must still compile (a new ApiKey's new Tenant may not
    // have fitted): what does not is left out as well.
    const compiling = (entries: Entry[]): Set<string> => {
      const creds: Record<string, string> = { ...credentials };
      for (const e of entries) if (e.credential !== undefined) creds[e.manifest.metadata.name] = e.credential;
      const { kept } = settle(
        entries.map((e) => ({ obj: byKey.get(e.key)!, manifest: e.manifest })),
        creds,
        world.namespace,
      );
      return new Set(kept.map((c) => objectKey(c.obj.kind, c.obj.metadata.name)));
    };
    const published = world.published?.();
    const inputs = selectionInputs(world.namespace, out.hash, desired, created, published);
    const chosen = memo.select(inputs, () =>
      fitted(desired, withinLimit(published, desired, created, compiling), published),
    );
    out = chosen.publication;
    const includedByKey = new Map(included.map((c) => [objectKey(c.obj.kind, c.obj.metadata.name), c.obj]));
    for (const [key, why] of chosen.leftOut)
      // No byte count here: it changes with every edit, and each change re-patched every status.
      fail(
        includedByKey.get(key)!,
        'SnapshotTooLarge',
        `the snapshot would be over the ${MAX_SNAPSHOT_BYTES} bytes a Secret holds (gzipped); ${
          why === 'previous'
            ? 'its previous version keeps serving'
            : why === 'stale'
              ? 'its previous version no longer compiles beside the rest, so this object is not served'
              : why === 'withheld'
                ? 'its edit may take something away (a price raised, a limit lowered, models narrowed, a new target), so neither its previous version nor this one is served'
                : 'this object is not served'
        } until older objects make room`,
      );
    tooLarge = { bytes, leftOut: chosen.leftOut.length };
  }
  return {
    ...out,
    verdicts: [...verdicts.values()].sort((a, b) => byKindAndName(a, b)).map(clipMessage),
    generate,
    ...(tooLarge ? { tooLarge } : {}),
  };
}

/**
 * A hash of everything the over-limit selection reads: the desired entries (their content hash,
 * computed for the plan anyway), their age and what is published. Remembered by it, an
 * unchanged world costs this hash over keys and creation times instead of a gzip of the
 * snapshot, a read of the published one and the search.
 */
function selectionInputs(
  namespace: string,
  desiredHash: string,
  desired: readonly Entry[],
  created: ReadonlyMap<string, string>,
  published: Published | undefined,
): string {
  const h = createHash('sha256').update(`${namespace}\0${desiredHash}\0${published?.hash ?? 'none'}`);
  for (const d of desired) h.update(`\0${d.key}\0${created.get(d.key) ?? ''}`);
  return h.digest('hex');
}

/**
 * Compile what is left until it compiles cleanly: objects an error names are left out, with
 * the error as their reason. Nothing attributable leaves everything out.
 */
function settle(
  start: Candidate[],
  credentials: Record<string, string>,
  namespace: string,
): { kept: Candidate[]; failed: [Candidate, string, string][] } {
  const failed: [Candidate, string, string][] = [];
  let included = start;
  for (let round = 0; round <= start.length; round++) {
    const items: LocatedManifest[] = included.map((c) => ({
      manifest: c.manifest,
      where: objectKey(c.obj.kind, c.obj.metadata.name),
    }));
    const result = compile(items, {
      env: {},
      version: 1,
      source: namespace,
      credentials: new Map(Object.entries(credentials)),
      // apiKeyEnv names a variable of the data-plane pods, which the operator cannot see.
      fakeBaseUrl: () => 'http://unused.invalid',
    });
    if (result.ok) break;
    const names = new Set<string>();
    for (const e of result.errors) {
      const at = e.indexOf(': ');
      const where = at > 0 ? e.slice(0, at) : '';
      const c = included.find((x) => objectKey(x.obj.kind, x.obj.metadata.name) === where);
      if (!c) continue;
      names.add(where);
      failed.push([c, reasonOf(e), e.slice(at + 2)]);
    }
    if (names.size === 0) {
      // Nothing attributable: publish nothing new rather than something a pod rejects.
      for (const c of included) failed.push([c, 'CompileError', result.errors.join('; ')]);
      return { kept: [], failed };
    }
    included = included.filter((c) => !names.has(objectKey(c.obj.kind, c.obj.metadata.name)));
  }
  return { kept: included, failed };
}

const entryOf = (c: Candidate, credentials: Record<string, string>): Entry => ({
  key: objectKey(c.obj.kind, c.obj.metadata.name),
  manifest: c.manifest,
  credential: c.obj.kind === 'ModelDeployment' ? credentials[c.obj.metadata.name] : undefined,
});

type Resolved = { ok: true; manifest: Manifest } | { ok: false; reason: string; message: string };

function resolveSecrets(
  world: World,
  obj: ObservedObject,
  manifest: Manifest,
  credentials: Record<string, string>,
  generate: KeyToGenerate[],
  keyHolders: ReadonlyMap<string, ReadonlyMap<string, string>>,
): Resolved {
  if (manifest.kind === 'ModelDeployment') {
    const env = manifest.spec.apiKeyEnv;
    // GANTRY_* names are the data plane's compile error (EnvNotAllowed below, in every mode).
    if (env !== undefined && !isGatewaySetting(env) && !world.providerEnv?.has(env))
      return { ok: false, reason: 'EnvNotAllowed', message: envNotListed(env, world.providerEnv) };
    const ref = manifest.spec.credentialsSecretRef;
    if (ref === undefined) return { ok: true, manifest };
    // The credential travels to the deployment's baseUrl, which its author chooses: a gateway
    // key there is a stolen key, whoever made its Secret.
    const holder = keyHolders.get(ref.name)?.get(ref.key);
    if (holder !== undefined)
      return {
        ok: false,
        reason: 'SecretNotAllowed',
        message: `key ${ref.key} of Secret ${ref.name} is ApiKey ${holder}'s key; spec.credentialsSecretRef may not name it`,
      };
    if (ref.name === world.snapshotSecret || world.generatedKeys.has(ref.name))
      return {
        ok: false,
        reason: 'SecretNotAllowed',
        message: `Secret ${ref.name} is ${ref.name === world.snapshotSecret ? 'the published snapshot' : "an ApiKey's generated key"}; spec.credentialsSecretRef may not name it`,
      };
    const secret = world.secrets.get(ref.name);
    if (!secret) return { ok: false, reason: 'SecretNotFound', message: `Secret ${ref.name} not found` };
    const unlabelled = refuseUnlabelled(world, ref.name, 'provider');
    if (unlabelled) return unlabelled;
    const value = secret[ref.key];
    if (value === undefined || value === '')
      return { ok: false, reason: 'SecretKeyNotFound', message: `Secret ${ref.name} has no key ${ref.key}` };
    const control = controlCharacter(value);
    if (control !== undefined)
      return {
        ok: false,
        reason: 'InvalidCredential',
        message: `key ${ref.key} of Secret ${ref.name} holds a control character (${control}), which no HTTP header may carry, so every request upstream would fail; a trailing newline often comes from \`echo\` without -n`,
      };
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
  // Hashed, its value is still told by DuplicateKey against a keyHash guess: a user's Secret
  // opts in as an ApiKey's key (apikey); only the one generated for this ApiKey need not.
  if (owner === undefined) {
    const unlabelled = refuseUnlabelled(world, secretRef.name, 'apikey');
    if (unlabelled) return unlabelled;
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
 * The first control character (C0 or DEL) of a provider credential, named by its code (never
 * the credential), or undefined. The data plane sends the credential in a header (or a query
 * parameter), where these are invalid: undici refuses the request. The snapshot also stores each
 * as a 6-byte \\u00XX escape.
 */
function controlCharacter(value: string): string | undefined {
  const at = value.search(/[\u0000-\u001f\u007f]/);
  if (at < 0) return undefined;
  const code = value.charCodeAt(at).toString(16).toUpperCase().padStart(4, '0');
  // Where, only as "at its end": a position would tell the credential's length.
  return `U+${code}${at === value.length - 1 ? ', at its end' : ''}`;
}

/** The data-plane pods see only the listed variables, so any other would be unset there. */
function envNotListed(name: string, listed: ReadonlySet<string> | undefined): string {
  const now = listed && listed.size > 0 ? [...listed].sort().join(', ') : 'none';
  return `spec.apiKeyEnv: ${name} is not a provider variable the data plane offers (${PROVIDER_ENV_VAR}, the chart's providerEnv; listed: ${now}); list it there, or use spec.credentialsSecretRef`;
}

const USE_TEXT: Record<CredentialsUse, string> = {
  provider: 'provider credentials',
  apikey: "an ApiKey's key",
};
const REF_FIELD: Record<CredentialsUse, string> = {
  provider: 'spec.credentialsSecretRef',
  apikey: 'spec.secretRef',
};

/**
 * Every Secret the operator reads on an object's behalf must opt in for that use (but the keys
 * it generated itself): RBAC lets it read all of the namespace, the object's author only some.
 */
function refuseUnlabelled(world: World, secret: string, use: CredentialsUse): Resolved | undefined {
  const value = world.secretLabels.get(secret)?.[CREDENTIALS_LABEL];
  if (value === CREDENTIALS_USE[use]) return undefined;
  const other = use === 'provider' ? 'apikey' : 'provider';
  if (value === CREDENTIALS_USE[other])
    return {
      ok: false,
      reason: 'SecretNotAllowed',
      message: labelledForOther(world.namespace, secret, use, other),
    };
  return {
    ok: false,
    reason: 'SecretNotLabelled',
    message: notLabelled(world.namespace, secret, value, use),
  };
}

const labelCommand = (namespace: string, secret: string, use: CredentialsUse, overwrite: boolean): string =>
  `kubectl -n ${namespace} label secret ${secret} ${CREDENTIALS_LABEL}=${CREDENTIALS_USE[use]}${overwrite ? ' --overwrite' : ''}`;

/** What the Secret lacks, and the command that grants it, for a person reading the condition. */
function notLabelled(
  namespace: string,
  secret: string,
  value: string | undefined,
  use: CredentialsUse,
): string {
  const label = `${CREDENTIALS_LABEL}=${CREDENTIALS_USE[use]}`;
  const why =
    value === undefined
      ? `Secret ${secret} is not labelled ${label}`
      : `Secret ${secret} is labelled ${CREDENTIALS_LABEL}=${value}, not ${CREDENTIALS_USE[use]}`;
  return `${why}, so it may not serve as ${USE_TEXT[use]}; if it is meant to: ${labelCommand(namespace, secret, use, value !== undefined)}`;
}

/**
 * Its owner said it is for the other use: a gateway key sent to a baseUrl is a stolen key, and
 * a provider key as an ApiKey's would be told by DuplicateKey. Relabelling is the owner's call.
 */
function labelledForOther(
  namespace: string,
  secret: string,
  use: CredentialsUse,
  other: CredentialsUse,
): string {
  return `Secret ${secret} is labelled ${CREDENTIALS_LABEL}=${CREDENTIALS_USE[other]}, for ${USE_TEXT[other]} only; ${REF_FIELD[use]} may not name it. If it holds ${USE_TEXT[use]} instead: ${labelCommand(namespace, secret, use, true)}`;
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

const isApiKey = (c: Candidate): c is Candidate & { manifest: Extract<Manifest, { kind: 'ApiKey' }> } =>
  c.manifest.kind === 'ApiKey';

/**
 * Two ApiKeys with one key would make the key's tenant ambiguous: the one created first keeps
 * it (ties by uid). By name, an ApiKey named to sort first could take over a key someone else's
 * ApiKey already serves, just by naming its Secret. The older one is never named: the newer
 * one's tenantRef is whatever its writer chose, so no tenant check makes the name safe to tell
 * (a keyHash guess naming the victim's tenant learnt which of its ApiKeys holds the key).
 */
function rejectDuplicateKeys(
  candidates: readonly Candidate[],
  fail: (obj: ObservedObject, reason: string, message: string) => void,
): void {
  const seen = new Set<string>();
  const oldestFirst = candidates
    .filter(isApiKey)
    .sort(
      (a, b) =>
        olderFirst(a.obj.metadata.creationTimestamp, b.obj.metadata.creationTimestamp) ||
        textOrder(a.obj.metadata.uid, b.obj.metadata.uid),
    );
  for (const c of oldestFirst) {
    const hash = c.manifest.spec.keyHash!;
    if (!seen.has(hash)) seen.add(hash);
    else fail(c.obj, 'DuplicateKey', 'the same key is already used by an older ApiKey');
  }
}

/** Secret name → data key → the ApiKey whose key it holds, for every ApiKey's secretRef. */
function apiKeySecrets(objects: readonly ObservedObject[]): Map<string, Map<string, string>> {
  const out = new Map<string, Map<string, string>>();
  for (const o of objects) {
    if (o.kind !== 'ApiKey') continue;
    const ref = (o.spec as { secretRef?: { name?: unknown; key?: unknown } } | null)?.secretRef;
    if (typeof ref?.name !== 'string') continue;
    const key = typeof ref.key === 'string' ? ref.key : DEFAULT_KEY_FIELD;
    const keys = out.get(ref.name) ?? new Map<string, string>();
    if (!keys.has(key)) keys.set(key, o.metadata.name);
    out.set(ref.name, keys);
  }
  return out;
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
  let cut = MAX_MESSAGE_CHARS - more.length;
  // Never half a surrogate pair: the apiserver stores it as U+FFFD, which never equals the
  // computed message, so the status would be re-patched on every reconcile.
  const last = v.message.charCodeAt(cut - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut--;
  return { ...v, message: v.message.slice(0, cut) + more };
}

function reasonOf(error: string): string {
  if (/Tenant .* not found/.test(error)) return 'TenantNotFound';
  if (/(GuardrailPolicy|CachePolicy) .* not found/.test(error)) return 'PolicyNotFound';
  if (/no ModelDeployment serves/.test(error)) return 'ModelNotFound';
  if (/already defined/.test(error)) return 'Duplicate';
  if (error.includes(API_KEY_ENV_NOT_ALLOWED)) return 'EnvNotAllowed';
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
