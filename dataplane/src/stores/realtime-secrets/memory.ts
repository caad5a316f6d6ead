/** Client secrets in process: the embedded default for one pod. */
import type { Clock } from '../types.ts';
import { systemClock } from '../types.ts';
import type { ClientSecret, ClientSecretStore } from './types.ts';

export class MemoryClientSecretStore implements ClientSecretStore {
  private readonly secrets = new Map<string, ClientSecret>();
  /** Per minting key (`tenant/keyId`): its secrets' hashes and expiries, for the per-key cap. */
  private readonly byKey = new Map<string, Map<string, number>>();

  constructor(
    private readonly now: Clock = systemClock,
    /** A bound on memory whatever the minting rate: past it the oldest secret is forgotten. */
    private readonly max = 100_000,
  ) {}

  async put(hash: string, secret: ClientSecret, maxPerKey: number): Promise<boolean> {
    const now = this.now();
    if (secret.expiresAt <= now) return true;
    const owner = `${secret.tenant}/${secret.keyId}`;
    const live = this.byKey.get(owner) ?? new Map<string, number>();
    // Expired, read-expired or evicted secrets no longer count against their key.
    for (const [h, expiresAt] of live) if (expiresAt <= now || !this.secrets.has(h)) live.delete(h);
    if (!live.has(hash) && live.size >= maxPerKey) {
      if (live.size === 0) this.byKey.delete(owner);
      return false;
    }
    live.set(hash, secret.expiresAt);
    this.byKey.set(owner, live);
    this.secrets.delete(hash);
    this.secrets.set(hash, secret);
    for (const [h, s] of this.secrets) {
      if (this.secrets.size <= this.max && s.expiresAt > now) break;
      this.secrets.delete(h);
    }
    return true;
  }

  async get(hash: string): Promise<ClientSecret | undefined> {
    const secret = this.secrets.get(hash);
    if (secret && secret.expiresAt <= this.now()) {
      this.secrets.delete(hash);
      return undefined;
    }
    return secret;
  }
}
