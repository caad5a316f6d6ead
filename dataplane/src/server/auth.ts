/**
 * API keys are known only as SHA-256 hashes. The presented key is hashed and its digest
 * looked up; the lookup's timing can only ever tell something about a digest, never about a
 * key, and the final comparison is constant-time. OpenAI clients send
 * `Authorization: Bearer`, Anthropic clients `x-api-key`, Google's Gemini SDKs
 * `x-goog-api-key`; all three are accepted, in that order of precedence: the first header
 * present is the one judged, so a wrong key is never rescued by another header. A key in the
 * URL (Google's `?key=`) is not accepted: URLs are written to access logs and proxies' logs.
 */
import { hash, timingSafeEqual } from 'node:crypto';
import type { KeyRecord, Snapshot, TenantRecord } from '../config/snapshot.ts';
import { GatewayError } from '../errors.ts';

// The one-shot hash: about 0.4 us cheaper per request than a Hash object (issue 15).
export const hashKey = (key: string): Buffer => hash('sha256', key, 'buffer');

export function presentedKey(headers: Record<string, string | string[] | undefined>): string | undefined {
  const auth = headers.authorization;
  if (typeof auth === 'string') {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    return match?.[1] ?? '';
  }
  const apiKey = headers['x-api-key'] ?? headers['x-goog-api-key'];
  return typeof apiKey === 'string' ? apiKey.trim() : undefined;
}

/** Whether the URL's query names a `key`, as Google's REST examples put it. */
export function keyInQuery(url: string): boolean {
  const q = url.indexOf('?');
  return q !== -1 && new URLSearchParams(url.slice(q + 1)).has('key');
}

/** `url` only shapes the message when no key was sent; it is never a source of the key. */
export function authenticate(
  snapshot: Snapshot,
  key: string | undefined,
  url?: string,
): { key: KeyRecord; tenant: TenantRecord } {
  if (key === undefined)
    throw new GatewayError(
      'authentication_error',
      url !== undefined && keyInQuery(url)
        ? 'missing API key: a key in the URL (?key=) is not accepted; send it in the x-goog-api-key header or Authorization: Bearer <key>'
        : 'missing API key: send Authorization: Bearer <key>',
    );
  const digest = hashKey(key);
  const record = snapshot.keys.get(digest.toString('hex'));
  if (!record || !timingSafeEqual(record.hash, digest))
    throw new GatewayError('authentication_error', 'invalid API key');
  const tenant = snapshot.tenants.get(record.tenant);
  if (!tenant) throw new GatewayError('authentication_error', 'invalid API key');
  return { key: record, tenant };
}
