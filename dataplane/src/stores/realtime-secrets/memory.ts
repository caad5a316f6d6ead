/**
 * Client secrets in process, the embedded default for one pod. A secret is looked up by its
 * hash alone (whoever presents it does not say who minted it), so this is not the owner-keyed
 * store; it shares that store's fair bound (TenantBound): past the count or size bound the
 * largest tenant's oldest secret goes, so one tenant minting without pause never pushes out
 * the secrets another tenant's browsers are about to connect with.
 */
import { TenantBound } from '../tenant-bound.ts';
import { systemClock, type Clock } from '../types.ts';
import type { ClientSecret, ClientSecretStore } from './types.ts';

export const DEFAULT_MAX_CLIENT_SECRETS = 100_000;
/** `session` is the caller's own configuration (instructions, tools): the count alone bounds no memory. */
export const DEFAULT_MAX_CLIENT_SECRET_CHARS = 64 * 1024 * 1024;

export interface MemoryClientSecretStoreOptions {
  maxSecrets?: number;
  /** Total characters of the stored JSON. */
  maxChars?: number;
  clock?: Clock;
}

interface Held {
  /** Stored as JSON: the copy (a caller's later edits never reach it) and the size. */
  json: string;
  expiresAt: number;
  tenant: string;
  minter: string;
}

/** NUL cannot occur in tenant names or key ids. */
const minterOf = (s: Pick<ClientSecret, 'tenant' | 'keyId'>): string => `${s.tenant}\u0000${s.keyId}`;

export class MemoryClientSecretStore implements ClientSecretStore {
  private readonly secrets = new Map<string, Held>();
  /** Per minting key: the hashes of its stored secrets, for the per-key cap. Kept exact on every removal. */
  private readonly byMinter = new Map<string, Set<string>>();
  private readonly bound: TenantBound;
  private readonly clock: Clock;

  constructor(opts: MemoryClientSecretStoreOptions = {}) {
    this.bound = new TenantBound({
      maxEntries: opts.maxSecrets ?? DEFAULT_MAX_CLIENT_SECRETS,
      maxBytes: opts.maxChars ?? DEFAULT_MAX_CLIENT_SECRET_CHARS,
    });
    this.clock = opts.clock ?? systemClock;
  }

  async put(hash: string, secret: ClientSecret, maxPerKey: number): Promise<boolean> {
    const now = this.clock();
    if (secret.expiresAt <= now) return true;
    const minter = minterOf(secret);
    // Expired secrets no longer count against their key.
    for (const h of this.byMinter.get(minter) ?? [])
      if (this.secrets.get(h)!.expiresAt <= now) this.remove(h);
    const held = this.byMinter.get(minter);
    if (!held?.has(hash) && (held?.size ?? 0) >= maxPerKey) return false;
    this.remove(hash);
    const json = JSON.stringify(secret);
    this.secrets.set(hash, { json, expiresAt: secret.expiresAt, tenant: secret.tenant, minter });
    const hashes = this.byMinter.get(minter) ?? new Set<string>();
    this.byMinter.set(minter, hashes.add(hash));
    for (const victim of this.bound.added(secret.tenant, hash, json.length)) this.remove(victim.key);
    return true;
  }

  async get(hash: string): Promise<ClientSecret | undefined> {
    const hit = this.secrets.get(hash);
    if (!hit) return undefined;
    if (hit.expiresAt <= this.clock()) {
      this.remove(hash);
      return undefined;
    }
    return JSON.parse(hit.json) as ClientSecret;
  }

  /** Forgets a secret everywhere it is counted (the bound ignores a key it already let go). */
  private remove(hash: string): void {
    const hit = this.secrets.get(hash);
    if (!hit) return;
    this.secrets.delete(hash);
    this.bound.removed(hit.tenant, hash);
    const hashes = this.byMinter.get(hit.minter);
    hashes?.delete(hash);
    if (hashes?.size === 0) this.byMinter.delete(hit.minter);
  }
}
