/**
 * Cache partition keys: `<tenant>/<format>/<shape hash>`. Every read and write of the vector
 * index and the entry store names one partition, and nothing is ever looked up across two,
 * so one tenant's entries cannot answer another's request, nor an Anthropic-format request
 * an OpenAI one, nor a request shaped differently (model, response_format, ...).
 *
 * The tenant is kept readable (percent-encoded, so the key is injective and uses only
 * `[A-Za-z0-9._~%-]` there) because flushing and stats go by tenant; the rest is a hash.
 */

const STRICT_EXTRA = /[!'()*]/g;
/** encodeURIComponent plus the five characters it leaves alone, so globs and quotes never appear. */
export const encodeSegment = (s: string): string =>
  encodeURIComponent(s).replace(STRICT_EXTRA, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

const SEGMENT = '[A-Za-z0-9._~%-]+';
const PARTITION_RE = new RegExp(`^(${SEGMENT})/(${SEGMENT})/([A-Za-z0-9_-]+)$`);
/** Longest key accepted; Milvus stores it in a VarChar of this size. */
export const MAX_PARTITION_LENGTH = 512;

export function partitionKey(tenant: string, format: string, hash: string): string {
  if (tenant === '') throw new TypeError('cache partition: empty tenant');
  const key = `${encodeSegment(tenant)}/${encodeSegment(format)}/${hash}`;
  assertPartition(key);
  return key;
}

export function isPartition(key: string): boolean {
  return key.length <= MAX_PARTITION_LENGTH && PARTITION_RE.test(key);
}

/** Stores refuse malformed keys: they are spliced into Redis key names and Milvus filters. */
export function assertPartition(key: string): void {
  if (!isPartition(key))
    throw new TypeError(`not a cache partition key: ${JSON.stringify(key.slice(0, 80))}`);
}

/** The tenant segment as stored (percent-encoded). */
export function partitionTenantSegment(key: string): string {
  const m = PARTITION_RE.exec(key);
  if (!m) throw new TypeError(`not a cache partition key: ${JSON.stringify(key.slice(0, 80))}`);
  return m[1] as string;
}

export const partitionTenant = (key: string): string => decodeURIComponent(partitionTenantSegment(key));

const DIGEST_RE = /^[A-Za-z0-9_-]{16,128}$/;
/** Exact-request digests are base64url: stores splice them into key names as they are. */
export function assertDigest(digest: string): void {
  if (!DIGEST_RE.test(digest))
    throw new TypeError(`not a cache digest: ${JSON.stringify(digest.slice(0, 80))}`);
}
