/**
 * Who may read analytics. The `/api/...` endpoints take `Authorization: Bearer <key>` like the
 * public API, but only two kinds of caller get through:
 *  - a platform administrator: the bootstrap key from `GANTRY_ADMIN_KEY`, known to the data
 *    plane only as its SHA-256 and compared in constant time; any tenant, or all of them;
 *  - a tenant administrator: an ApiKey with `role: admin`; its own tenant only.
 * A `user` key gets 403, no or an unknown key 401.
 */
import { timingSafeEqual } from 'node:crypto';
import type { Snapshot } from '../../config/snapshot.ts';
import { GatewayError } from '../../errors.ts';
import { authenticate, hashKey, presentedKey } from '../auth.ts';

export const ADMIN_KEY_ENV = 'GANTRY_ADMIN_KEY';

/** The key opens every tenant's analytics and held-work release: shorter is guessable. */
export const MIN_ADMIN_KEY_CHARS = 32;

export type Principal = { kind: 'platform' } | { kind: 'tenant-admin'; tenant: string; keyId: string };

/**
 * The bootstrap key's hash, so the key itself need not stay in memory; undefined when unset.
 * Set but shorter than MIN_ADMIN_KEY_CHARS (blank included: a chart Secret with an empty value
 * meant to set one) stops the start, like GANTRY_COMPACTION_SECRET.
 */
export function adminKeyHashFromEnv(env: Readonly<Record<string, string | undefined>>): Buffer | undefined {
  const raw = env[ADMIN_KEY_ENV];
  if (raw === undefined) return undefined;
  const key = raw.trim();
  if (key.length < MIN_ADMIN_KEY_CHARS)
    throw new Error(
      `${ADMIN_KEY_ENV} must be at least ${MIN_ADMIN_KEY_CHARS} characters, got ${key.length} (e.g. openssl rand -hex 32), or unset it to have no platform admin`,
    );
  return hashKey(key);
}

export function authorizeAnalytics(
  headers: Record<string, string | string[] | undefined>,
  snapshot: Snapshot,
  adminKeyHash: Buffer | undefined,
  /** What a key that is no admin is told: the route's own need, when analytics are not it. */
  notAdmin = 'analytics need an admin key (ApiKey spec.role: admin)',
): Principal {
  const key = presentedKey(headers);
  if (key !== undefined && key !== '' && adminKeyHash !== undefined) {
    const digest = hashKey(key);
    if (digest.length === adminKeyHash.length && timingSafeEqual(digest, adminKeyHash))
      return { kind: 'platform' };
  }
  const { key: record } = authenticate(snapshot, key || undefined);
  if (record.role !== 'admin') throw new GatewayError('permission_denied', notAdmin);
  return { kind: 'tenant-admin', tenant: record.tenant, keyId: record.id };
}

/**
 * The tenant a request may see: a tenant administrator its own (the default) and no other; a
 * platform administrator the one asked for, or null for every tenant.
 */
export function scopeTenant(p: Principal, requested: string | undefined): string | null {
  if (p.kind === 'platform') return requested ?? null;
  if (requested !== undefined && requested !== p.tenant)
    throw new GatewayError(
      'permission_denied',
      `this key may read the analytics of tenant ${p.tenant} only`,
      {
        param: 'tenant_id',
      },
    );
  return p.tenant;
}
