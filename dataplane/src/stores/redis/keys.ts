/**
 * Key names. Every key of a tenant carries the hash tag `{tenant}`, so all keys one script
 * touches (budget, wallet, ledger) sit in one Redis Cluster slot. Parts are URI-encoded, which
 * keeps the naming injective whatever characters names contain.
 */
import type { KeyRef } from '../types.ts';

const enc = encodeURIComponent;

export class KeySpace {
  constructor(readonly prefix = 'gantry') {}

  tenant(tenant: string): string {
    return `${this.prefix}:{${enc(tenant)}}`;
  }

  private key(k: KeyRef): string {
    return `${this.tenant(k.tenant)}:key:${enc(k.keyId)}`;
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
