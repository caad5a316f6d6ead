/**
 * The exact tier: the digest of everything the semantic lookup keys and embeds — the
 * partition (tenant, format, model, every answer-shaping field, the instructions verbatim…),
 * the query text and the context text, exactly. Two requests with the same digest would
 * embed to the same vectors in the same partition, so a stored answer found by digest is the
 * one the semantic path would find at score 1, without the embedding (README "Exact tier").
 */
import { createHash } from 'node:crypto';
import type { CacheKeyParts } from './key.ts';

/**
 * SHA-256, base64url (43 characters), of the three texts as a JSON array: injective, and
 * lone surrogates are escaped rather than all hashed as U+FFFD.
 */
export function exactDigest(parts: CacheKeyParts): string {
  return createHash('sha256')
    .update(JSON.stringify([parts.partition, parts.query, parts.context]))
    .digest('base64url');
}
