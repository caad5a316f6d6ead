/**
 * Key names. Every key of a tenant carries the hash tag `{tenant}`, so all keys one script
 * touches (budget, wallet, ledger) sit in one Redis Cluster slot. Parts are URI-encoded, which
 * keeps the naming injective whatever characters names contain.
 */
import type { KeyRef } from '../types.ts';

const enc = encodeURIComponent;

/**
 * Names stay cached up to this many distinct tenants or keys (a metered request names about
 * twenty keys, each encoding the same two parts); past it the cache starts over, so names
 * callers make up cannot grow it without bound.
 */
const MAX_CACHED = 10_000;

export class KeySpace {
  private readonly tenants = new Map<string, string>();
  /** Per tenant, its API keys' base names. */
  private readonly keyBases = new Map<string, Map<string, string>>();
  private cachedKeys = 0;

  constructor(readonly prefix = 'gantry') {}

  tenant(tenant: string): string {
    let name = this.tenants.get(tenant);
    if (name === undefined) {
      if (this.tenants.size >= MAX_CACHED) this.tenants.clear();
      name = `${this.prefix}:{${enc(tenant)}}`;
      this.tenants.set(tenant, name);
    }
    return name;
  }

  private key(k: KeyRef): string {
    let bases = this.keyBases.get(k.tenant);
    let name = bases?.get(k.keyId);
    if (name !== undefined) return name;
    if (this.cachedKeys >= MAX_CACHED) {
      this.keyBases.clear();
      this.cachedKeys = 0;
      bases = undefined;
    }
    if (bases === undefined) {
      bases = new Map();
      this.keyBases.set(k.tenant, bases);
    }
    name = `${this.tenant(k.tenant)}:key:${enc(k.keyId)}`;
    bases.set(k.keyId, name);
    this.cachedKeys++;
    return name;
  }

  /** ZSET of admitted requests (`id:tokens`, score = admission ms). */
  rateWindow(k: KeyRef): string {
    return `${this.key(k)}:rl:w`;
  }

  /** Token total of the window. */
  rateTokens(k: KeyRef): string {
    return `${this.key(k)}:rl:t`;
  }

  /** ZSET of a key's live Realtime client secrets (secret hash, score = expiry ms), for the per-key cap. */
  realtimeSecrets(k: KeyRef): string {
    return `${this.key(k)}:rtsecrets`;
  }

  /** HASH: held, credit. */
  budget(k: KeyRef): string {
    return `${this.key(k)}:budget`;
  }

  /** Settled spend of one period. */
  spent(k: KeyRef, periodKey: string): string {
    return `${this.key(k)}:spent:${periodKey}`;
  }

  /** HASH reservation id → held micro-dollars. */
  reservations(k: KeyRef): string {
    return `${this.key(k)}:res`;
  }

  /** ZSET reservation id → expiry ms. */
  reservationExpiry(k: KeyRef): string {
    return `${this.key(k)}:resexp`;
  }

  /** Marker of a settled reservation id (rejects a duplicate settle). */
  settled(k: KeyRef, id: string): string {
    return `${this.key(k)}:settled:${id}`;
  }

  /** Recharged micro-dollars in a calendar month (for the monthly cap). */
  recharged(k: KeyRef, month: string): string {
    return `${this.key(k)}:recharged:${month}`;
  }

  /** HASH: balance, configured. */
  wallet(tenant: string): string {
    return `${this.tenant(tenant)}:wallet`;
  }

  /** STREAM of ledger entries. */
  ledger(tenant: string): string {
    return `${this.tenant(tenant)}:ledger`;
  }

  walletIdempotency(tenant: string, idempotencyKey: string): string {
    return `${this.tenant(tenant)}:wallet:idem:${enc(idempotencyKey)}`;
  }
}
