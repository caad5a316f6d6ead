/**
 * The snapshot as it sits in its Secret: its text, its size against the Secret's limit, what
 * the Secret holds now, and, when everything does not fit, which part is published.
 */
import type { Manifest } from '@gantry/crds';
import {
  contentHash,
  packSnapshot,
  parsePublishedParts,
  PUBLISHED_DATA_KEY,
  PUBLISHED_FORMAT,
  PUBLISHED_GZIP_KEY,
  publishedText,
  type PublishedSnapshot,
} from '@gantry/dataplane/config/published';
import { objectKey, olderFirst, type Published } from '../world.ts';
import { guessFitting, longestFitting } from './longest-fit.ts';
import { deploymentTightenings, sameJson, tenantLoosensOnly } from './loosening.ts';

/** What is published: manifests, the credentials beside them, and their content hash. */
export interface Publication {
  manifests: Manifest[];
  credentials: Record<string, string>;
  hash: string;
}

/**
 * The apiserver refuses a Secret whose data adds up to more than 1 MiB. The margin leaves room
 * for the version's digits, which change the gzipped size by a few bytes.
 */
export const MAX_SNAPSHOT_BYTES = 1024 * 1024 - 64;

/** The text published into the snapshot Secret, exactly as the data plane reads it. */
export function snapshotText(p: Publication, version: number): string {
  const doc: PublishedSnapshot = {
    format: PUBLISHED_FORMAT,
    version,
    hash: p.hash,
    manifests: p.manifests,
    credentials: p.credentials,
  };
  return JSON.stringify(doc);
}

/**
 * The snapshot Secret's data for a snapshot text: the gzipped form, and the plain form beside it
 * while both fit. Pods of the release before gzip read only the plain key, so during a rolling
 * upgrade they keep receiving changes (revocations included) instead of staying on the last
 * snapshot they could read; past the room for both, only the gzipped form is written.
 */
export function snapshotSecretData(text: string): Record<string, string> {
  const gz = packSnapshot(text);
  const data: Record<string, string> = { [PUBLISHED_GZIP_KEY]: gz.toString('base64') };
  if (gz.length + Buffer.byteLength(text) <= MAX_SNAPSHOT_BYTES)
    data[PUBLISHED_DATA_KEY] = Buffer.from(text).toString('base64');
  return data;
}

/**
 * The snapshot Secret's current content, checked as a pod checks it (parsePublishedParts), so
 * the base of an over-the-limit plan is never something pods reject: undefined if the snapshot
 * itself is not one a pod reads; otherwise its manifests that pass today's schemas, with the
 * credentials of the deployments kept. One manifest a newer schema refuses drops that object
 * alone (the plan republishes or leaves it out as it is now), not every other one's last version.
 */
export function readPublished(data: Readonly<Record<string, string>> | undefined): Published | undefined {
  const read = publishedText(data);
  if (!read.ok) return undefined;
  const parsed = parsePublishedParts(read.text, 'the snapshot Secret');
  if (!parsed.ok) return undefined;
  const manifests = parsed.items.map((i) => i.manifest);
  const deployments = new Set(
    manifests.filter((m) => m.kind === 'ModelDeployment').map((m) => m.metadata.name),
  );
  const credentials = Object.fromEntries(
    Object.entries(parsed.published.credentials).filter(([name]) => deployments.has(name)),
  );
  return { manifests, credentials, hash: contentHash(manifests, credentials) };
}

/** One object as published: its manifest and, for a ModelDeployment, its credential. */
export interface Entry {
  key: string;
  manifest: Manifest;
  credential?: string | undefined;
}

/**
 * A publication's size as held against MAX_SNAPSHOT_BYTES: its gzipped bytes (with the most
 * digits a version can have), except where the plain text is small enough that even gzip's
 * worst case fits. There it is the plain length, which is not the gzipped size but gives the
 * same verdict without a gzip. So over the limit it is always the gzipped size; under it, only
 * the comparison means anything (the search's guess interpolates such sizes too, as a guess).
 */
export function sizeAgainstLimit(p: Publication): number {
  const text = snapshotText(p, Number.MAX_SAFE_INTEGER);
  const raw = Buffer.byteLength(text);
  // gzip never grows a text by more than its few header bytes and 5 per 16 KB block.
  if (raw * 1.01 + 64 <= MAX_SNAPSHOT_BYTES) return raw;
  return packSnapshot(text).length;
}

export function publication(entries: Iterable<Entry>): Publication {
  const sorted = [...entries].sort(
    (a, b) =>
      a.manifest.kind.localeCompare(b.manifest.kind) ||
      a.manifest.metadata.name.localeCompare(b.manifest.metadata.name),
  );
  const manifests = sorted.map((e) => e.manifest);
  const credentials: Record<string, string> = {};
  for (const e of sorted)
    if (e.manifest.kind === 'ModelDeployment' && e.credential !== undefined)
      credentials[e.manifest.metadata.name] = e.credential;
  return { manifests, credentials, hash: contentHash(manifests, credentials) };
}

/** Why an object's current version is not in an over-the-limit publication. */
export type LeftOut =
  /** Its previous version keeps serving. */
  | 'previous'
  /** Its previous version no longer compiles beside the rest. */
  | 'stale'
  /** It was not published before. */
  | 'new'
  /** Its edit may take something away, so its previous version is not served either. */
  | 'withheld';

/** What is published over the limit, and which objects' current versions are left out. */
export interface Fitted {
  publication: Publication;
  leftOut: [key: string, why: LeftOut][];
}

/** The publication of an over-the-limit selection, and why each desired object not in it is left out. */
export function fitted(
  desired: readonly Entry[],
  selected: Selection,
  published: Published | undefined,
): Fitted {
  const out = publication(selected.entries);
  const now = new Map(out.manifests.map((m) => [objectKey(m.kind, m.metadata.name), m]));
  const was = new Set((published?.manifests ?? []).map((m) => objectKey(m.kind, m.metadata.name)));
  const leftOut: Fitted['leftOut'] = [];
  for (const d of desired) {
    const m = now.get(d.key);
    if (m !== undefined && sameJson(m, d.manifest)) continue;
    const why: LeftOut =
      m !== undefined
        ? 'previous'
        : selected.withheld.has(d.key)
          ? 'withheld'
          : was.has(d.key)
            ? 'stale'
            : 'new';
    leftOut.push([d.key, why]);
  }
  return { publication: out, leftOut };
}

/** Tenant key → the policies it names (keys) that the base lacks and that are publishable now. */
function policiesNeeded(
  base: ReadonlyMap<string, Entry>,
  wanted: ReadonlyMap<string, Entry>,
): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [key, e] of base) {
    if (e.manifest.kind !== 'Tenant') continue;
    const { guardrails, cache } = e.manifest.spec;
    const refs = [
      guardrails?.policyRef && objectKey('GuardrailPolicy', guardrails.policyRef.name),
      cache?.policyRef && objectKey('CachePolicy', cache.policyRef.name),
    ].filter((k): k is string => k !== undefined && !base.has(k) && wanted.has(k));
    if (refs.length > 0) out.set(key, refs);
  }
  return out;
}

/** What goes into an over-the-limit publication, and which tightening edits did not fit. */
export interface Selection {
  entries: Entry[];
  /** Keys whose tightening edit did not fit: out until it does, not at their previous version. */
  withheld: ReadonlySet<string>;
}

/** Changes skipped over for not fitting before the rest waits for room. */
const MAX_SKIPS = 4;

const jsonLength = (v: unknown): number => JSON.stringify(v).length;

/** The same manifest and credential: nothing for a pod to learn. */
const sameEntry = (a: Entry | undefined, b: Entry): boolean =>
  a !== undefined && a.credential === b.credential && sameJson(a.manifest, b.manifest);

type DeploymentSpec = Extract<Manifest, { kind: 'ModelDeployment' }>['spec'];

/** Where a deployment sends its credential, and which credential: all of it, or none. */
const sameTarget = (a: DeploymentSpec, b: DeploymentSpec): boolean =>
  a.baseUrl === b.baseUrl &&
  a.provider === b.provider &&
  a.apiKeyEnv === b.apiKeyEnv &&
  sameJson(a.credentialsSecretRef ?? null, b.credentialsSecretRef ?? null);

/**
 * Everything does not fit: start from the last published snapshot with what only shrinks it
 * applied (an object deleted, or failing now for any reason but size, gone; an ApiKey disabled
 * or given another key follows its object now; a ModelDeployment's rotated credential is the
 * new one, and a deployment moved to another host, provider or credential is its new version;
 * a tenant or deployment edit that may take something away is its new version, with any policy
 * a tenant now names), so a revocation is never held back by size; then add the new and
 * changed objects oldest first, as many as fit. What is left out keeps its previous version,
 * if it had one and it is safe to keep.
 */
export function withinLimit(
  published: Published | undefined,
  desired: readonly Entry[],
  /** Object key → creationTimestamp. */
  created: ReadonlyMap<string, string>,
  /** Which of these compile together (keys). */
  compiling: (entries: Entry[]) => Set<string>,
): Selection {
  const wanted = new Map(desired.map((d) => [d.key, d]));
  const base = new Map<string, Entry>();
  /** ApiKeys changed in the base other than by a revocation → their published version. */
  const grownKeys = new Map<string, Entry>();
  /** Grown changes that must not wait behind size (a tightened tenant, a moved deployment) → growth. */
  const mustApply = new Map<string, number>();
  /** Of those, the ones left out for not fitting. */
  const withheld = new Set<string>();
  for (const m of published?.manifests ?? []) {
    const key = objectKey(m.kind, m.metadata.name);
    const now = wanted.get(key);
    // Deleted, or not publishable now for a reason other than size (invalid, its Secret gone
    // or not allowed, its tenant gone, ...): its last version is not published either, or a
    // deployment would keep sending a credential it may no longer name, and a key keep working.
    if (now === undefined) continue;
    // A rotated provider credential is applied like a revocation: the old one may be revoked
    // upstream already, and the new one is about the same size.
    const old: Entry = { key, manifest: m, credential: now.credential };
    if (m.kind === 'ApiKey') {
      const was = m.spec;
      const is = now.manifest.spec as typeof was;
      if (is.disabled === true || is.keyHash !== was.keyHash) base.set(key, now);
      // Any other ApiKey change may take privilege away (role, budget, models): it is not
      // held back behind larger objects, and it is a few bytes at most.
      else {
        base.set(key, now);
        grownKeys.set(key, old);
      }
      continue;
    }
    // Today's credential goes only where today's manifest sends it: an old manifest beside it
    // would send a key rotated for a new host to the old one.
    const retargeted =
      m.kind === 'ModelDeployment' && !sameTarget(m.spec, now.manifest.spec as typeof m.spec);
    // A change that may take something away is a revocation too, even when it grows: a tenant
    // narrowed, a deployment's price raised or limit lowered (its old version would undercharge
    // every request, or leave the limit unenforced, until the snapshot fits).
    const tightened =
      m.kind === 'Tenant'
        ? !tenantLoosensOnly(m.spec, now.manifest.spec as typeof m.spec)
        : m.kind === 'ModelDeployment' &&
          deploymentTightenings(m.spec, now.manifest.spec as typeof m.spec).length > 0;
    if (retargeted || tightened) {
      base.set(key, now);
      const growth = jsonLength(now.manifest) - jsonLength(m);
      if (growth > 0) mustApply.set(key, growth);
      continue;
    }
    // A change that does not grow the snapshot (a shorter policy) cannot push it over the
    // limit, so it need not wait for room either.
    base.set(key, jsonLength(now.manifest) <= jsonLength(m) ? now : old);
  }
  // A tenant in the base naming a policy the base lacks (new, or held back until now) would not
  // compile beside it and go dark, its keys with it: the policy goes in with the tenant, as one
  // change, and they are left out together if they do not fit.
  const companions = policiesNeeded(base, wanted);
  for (const [key, needs] of companions) {
    let growth = mustApply.get(key) ?? 0;
    for (const k of needs)
      if (!base.has(k)) {
        base.set(k, wanted.get(k)!);
        growth += jsonLength(wanted.get(k)!.manifest);
      }
    if (growth > 0) mustApply.set(key, growth);
  }
  const baseBytes = (): number => sizeAgainstLimit(publication(base.values()));
  // ApiKey edits could grow the base past the limit (a budget added to every key): then only
  // revocations and changes that do not grow go in first, and the rest waits like any change.
  if (grownKeys.size > 0 && baseBytes() > MAX_SNAPSHOT_BYTES)
    for (const [key, old] of grownKeys)
      if (jsonLength(base.get(key)!.manifest) > jsonLength(old.manifest)) base.set(key, old);
  // A tightened tenant or deployment, or a moved one, whose growth does not fit has no safe old
  // version to fall back to: the largest growths are left out (their keys or model unserved)
  // until the base fits. Each check is a gzip, but only grown revocations pay for it.
  if (mustApply.size > 0) {
    const largestFirst = [...mustApply].sort(([, a], [, b]) => b - a);
    for (const [key] of largestFirst) {
      if (baseBytes() <= MAX_SNAPSHOT_BYTES) break;
      base.delete(key);
      withheld.add(key);
      for (const k of companions.get(key) ?? [])
        if (![...companions].some(([t, ks]) => base.has(t) && ks.includes(k))) base.delete(k);
    }
  }
  // Oldest first; within one second (the timestamps' grain), by kind and name (a stable sort).
  const byAge = (a: Entry, b: Entry): number => olderFirst(created.get(a.key), created.get(b.key));
  const changes = desired.filter((d) => !sameEntry(base.get(d.key), d)).sort(byAge);
  // The size grows with each change taken (a change replaces a smaller or equal old version in
  // all but rare cases), so the longest run that fits is found by search, from a guess that
  // interpolates the measured sizes of none and all of the run by each change's growth in plain
  // JSON (about four gzips a round instead of a dozen). The change that does not fit is skipped,
  // so one huge object does not hold back every small one after it; a few skips bound the work.
  let chosen = new Map(base);
  let rest = changes;
  const bytesOf = (set: Map<string, Entry>): number => sizeAgainstLimit(publication(set.values()));
  let sizeOfNone: number | undefined;
  for (let skips = 0; rest.length > 0 && skips <= MAX_SKIPS; skips++) {
    const withFirst = (n: number): Map<string, Entry> => {
      const set = new Map(chosen);
      for (const d of rest.slice(0, n)) set.set(d.key, d);
      return set;
    };
    const sizes = new Map<number, number>();
    const sizeAt = (n: number): number => {
      const known = sizes.get(n) ?? (n === 0 ? sizeOfNone : undefined);
      if (known !== undefined) return known;
      const bytes = bytesOf(withFirst(n));
      sizes.set(n, bytes);
      return bytes;
    };
    const growth = rest.map(
      (d) => jsonLength(d.manifest) - (chosen.has(d.key) ? jsonLength(chosen.get(d.key)!.manifest) : 0),
    );
    const guess = guessFitting(growth, sizeAt(0), sizeAt(rest.length), MAX_SNAPSHOT_BYTES);
    const lo = longestFitting(rest.length, (n) => sizeAt(n) <= MAX_SNAPSHOT_BYTES, guess);
    for (const d of rest.slice(0, lo)) chosen.set(d.key, d);
    sizeOfNone = lo === 0 ? sizeAt(0) : sizes.get(lo);
    rest = rest.slice(lo + 1);
  }
  // What does not compile beside the rest is left out as well.
  let keptKeys = compiling([...chosen.values()]);
  // An old version that no longer compiles (its policy deleted with the edit that dropped it)
  // would take its object dark, its keys too: its new version is published instead if it fits.
  const stale = [...chosen.values()].filter((e) => !keptKeys.has(e.key) && !sameEntry(e, wanted.get(e.key)!));
  if (stale.length > 0) {
    const fits = (set: Map<string, Entry>) =>
      sizeAgainstLimit(publication(set.values())) <= MAX_SNAPSHOT_BYTES;
    const all = new Map(chosen);
    for (const e of stale) all.set(e.key, wanted.get(e.key)!);
    if (fits(all)) chosen = all;
    // One at a time, oldest first, a few at most (each costs a gzip).
    else
      for (const e of stale.sort(byAge).slice(0, MAX_SKIPS + 1)) {
        const one = new Map(chosen).set(e.key, wanted.get(e.key)!);
        if (fits(one)) chosen = one;
      }
    keptKeys = compiling([...chosen.values()]);
  }
  const entries = [...chosen.values()].filter((e) => keptKeys.has(e.key));
  return { entries, withheld: new Set([...withheld].filter((k) => !chosen.has(k))) };
}
