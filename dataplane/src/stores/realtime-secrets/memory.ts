/** Client secrets in process: the embedded default for one pod. */
import type { Clock } from '../types.ts';
import { systemClock } from '../types.ts';
import type { ClientSecret, ClientSecretStore } from './types.ts';

export class MemoryClientSecretStore implements ClientSecretStore {
  private readonly secrets = new Map<string, ClientSecret>();

  constructor(
    private readonly now: Clock = systemClock,
    /** A bound on memory whatever the minting rate: past it the oldest secret is forgotten. */
    private readonly max = 100_000,
  ) {}

  async put(hash: string, secret: ClientSecret): Promise<void> {
    this.secrets.delete(hash);
    this.secrets.set(hash, secret);
    for (const [h, s] of this.secrets) {
      if (this.secrets.size <= this.max && s.expiresAt > this.now()) break;
      this.secrets.delete(h);
    }
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
