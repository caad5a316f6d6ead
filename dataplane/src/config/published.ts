/**
 * The snapshot the operator publishes for every data-plane pod: the same manifests a
 * standalone gantry.yaml holds, with Secrets already resolved (ApiKeys carry only the key's
 * hash, provider credentials travel in a side map), versioned and content-hashed. It lives in
 * a Secret because it holds provider credentials; the data plane may read that one Secret only.
 */
import { formatAjvErrors, sharedValidators, Kinds, type KindName, type Manifest } from '@gantry/crds';
import { createHash } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { compile, type CompileOptions, type CompileResult, type LocatedManifest } from './compile.ts';

export const PUBLISHED_FORMAT = 'gantry.dev/snapshot/v1';
/** Key of the snapshot inside the published Secret's data, as plain JSON (older operators). */
export const PUBLISHED_DATA_KEY = 'snapshot.json';
/**
 * Key of the gzipped snapshot, which the operator publishes: a Secret holds 1 MiB, and the JSON
 * (key hashes, model names) shrinks several times over, so several times more objects fit.
 */
export const PUBLISHED_GZIP_KEY = 'snapshot.json.gz';
/**
 * A real snapshot that fits a Secret gzipped inflates about 6.5 times (under 7 MiB). The bound
 * is what a hand-written Secret can make every pod allocate: the text, its string and its
 * parse cost about twice the inflated size, so 256 MiB of padding took ~510 MiB and killed
 * pods limited to 512Mi (data plane) and 256Mi (operator); 32 MiB stays far below both.
 */
export const MAX_INFLATED_BYTES = 32 * 1024 * 1024;

/** The bytes the operator writes under PUBLISHED_GZIP_KEY. Deterministic (no file time). */
export function packSnapshot(text: string): Buffer {
  return gzipSync(text);
}

/**
 * The snapshot text of a published Secret's data (base64 values, as the API returns them):
 * the gzipped form when present, else the plain one.
 */
export function publishedText(
  data: Readonly<Record<string, string>> | undefined,
): { ok: true; text: string } | { ok: false; error: string } {
  const gz = data?.[PUBLISHED_GZIP_KEY];
  if (gz !== undefined)
    try {
      const text = gunzipSync(Buffer.from(gz, 'base64'), { maxOutputLength: MAX_INFLATED_BYTES });
      return { ok: true, text: text.toString('utf8') };
    } catch (err) {
      if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE')
        return {
          ok: false,
          error: `${PUBLISHED_GZIP_KEY} inflates to more than ${MAX_INFLATED_BYTES} bytes, far more than any snapshot that fits a Secret`,
        };
      return { ok: false, error: `${PUBLISHED_GZIP_KEY} is not gzip: ${(err as Error).message}` };
    }
  const plain = data?.[PUBLISHED_DATA_KEY];
  if (plain !== undefined) return { ok: true, text: Buffer.from(plain, 'base64').toString('utf8') };
  return { ok: false, error: `no ${PUBLISHED_GZIP_KEY} or ${PUBLISHED_DATA_KEY} in the Secret` };
}

export interface PublishedSnapshot {
  format: typeof PUBLISHED_FORMAT;
  /** Increments with every change the operator publishes. */
  version: number;
  /** hex SHA-256 over manifests and credentials: equal hashes mean nothing changed. */
  hash: string;
  manifests: Manifest[];
  /** ModelDeployment name → provider credential. */
  credentials: Record<string, string>;
}

/** Content hash of what a pod would serve; the version is not part of it. */
export function contentHash(manifests: readonly Manifest[], credentials: Record<string, string>): string {
  const sorted = Object.fromEntries(Object.entries(credentials).sort(([a], [b]) => a.localeCompare(b)));
  return createHash('sha256')
    .update(JSON.stringify({ manifests, credentials: sorted }))
    .digest('hex');
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const isKind = (k: unknown): k is KindName => typeof k === 'string' && Object.hasOwn(Kinds, k);

/**
 * Parse and check a published snapshot: its fields, and each manifest against its kind's
 * schema. Any problem rejects it whole. The operator reads its last snapshot through this too.
 */
export function parsePublished(
  text: string,
  source: string,
): { ok: true; published: PublishedSnapshot; items: LocatedManifest[] } | { ok: false; errors: string[] } {
  const parts = parsePublishedParts(text, source);
  if (!parts.ok) return parts;
  if (parts.errors.length > 0) return { ok: false, errors: parts.errors };
  return { ok: true, published: parts.published, items: parts.items };
}

/**
 * parsePublished's checks with the manifests kept apart: a snapshot whose fields are wrong is
 * refused (ok: false); otherwise `items` are the manifests that pass their schema and `errors`
 * say why each other one does not. A pod refuses a snapshot with any such error; the operator,
 * reading its last snapshot as the base of an over-the-limit plan, keeps what still validates
 * (a schema that tightened since should not throw away every other object's last version).
 */
export function parsePublishedParts(
  text: string,
  source: string,
):
  | { ok: true; published: PublishedSnapshot; items: LocatedManifest[]; errors: string[] }
  | { ok: false; errors: string[] } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    return { ok: false, errors: [`${source}: not JSON: ${(err as Error).message}`] };
  }
  // Any throw below would escape into the Secret watch's callback instead of rejecting.
  if (!isObject(parsed)) return { ok: false, errors: [`${source}: the snapshot must be a JSON object`] };
  const doc = parsed as Partial<PublishedSnapshot>;
  if (doc.format !== PUBLISHED_FORMAT)
    return { ok: false, errors: [`${source}: format must be ${PUBLISHED_FORMAT}`] };
  if (!Number.isSafeInteger(doc.version) || !Array.isArray(doc.manifests))
    return { ok: false, errors: [`${source}: version and manifests are required`] };
  const credentials = doc.credentials ?? {};
  if (!isObject(credentials) || !Object.values(credentials).every((v) => typeof v === 'string'))
    return { ok: false, errors: [`${source}: credentials must map deployment names to strings`] };
  const errors: string[] = [];
  const items: LocatedManifest[] = [];
  for (const [i, m] of (doc.manifests as unknown[]).entries()) {
    if (!isObject(m)) {
      errors.push(`${source}: manifests[${i}] must be an object`);
      continue;
    }
    const kind = (m as { kind?: unknown }).kind;
    const name = (m as { metadata?: { name?: unknown } }).metadata?.name;
    const where = `${String(kind)}/${String(name)}`;
    if (!isKind(kind)) {
      errors.push(`${where}: kind: unknown`);
      continue;
    }
    const validate = sharedValidators()[kind];
    if (!validate(m)) for (const e of formatAjvErrors(validate.errors ?? [])) errors.push(`${where}: ${e}`);
    else items.push({ manifest: m as Manifest, where });
  }
  return { ok: true, published: { ...(doc as PublishedSnapshot), credentials }, items, errors };
}

/**
 * Parse, check and compile a published snapshot; any problem rejects it whole, but for a
 * ModelDeployment whose apiKeyEnv this pod does not have: that one is left out with a warning
 * (the operator cannot see a pod's env; rejecting the whole snapshot for it stalled every
 * later change on the pod, revocations included).
 */
export function compilePublished(
  text: string,
  opts: Omit<CompileOptions, 'version' | 'source' | 'credentials'> & { source: string },
): CompileResult & { published?: PublishedSnapshot } {
  const parsed = parsePublished(text, opts.source);
  if (!parsed.ok) return parsed;
  const { published, items } = parsed;
  const credentials = new Map(Object.entries(published.credentials));
  const result = compile(items, { unsetEnv: 'leave-out', ...opts, credentials, version: published.version });
  return result.ok ? { ...result, published } : result;
}
