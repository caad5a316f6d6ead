/**
 * Client secrets in Redis, so a secret minted through one pod opens a session on any other:
 * one JSON value per secret hash, expiring with the secret (checked again by the pod's clock).
 */
import type { Redis } from 'ioredis';
import { toStoreError } from '../redis/client.ts';
import type { KeySpace } from '../redis/keys.ts';
import { systemClock, type Clock } from '../types.ts';
import type { ClientSecret, ClientSecretStore } from './types.ts';

export class RedisClientSecretStore implements ClientSecretStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: KeySpace,
    private readonly now: Clock = systemClock,
  ) {}

  private key(hash: string): string {
    return `${this.keys.prefix}:rtsecret:${encodeURIComponent(hash)}`;
  }

  async put(hash: string, secret: ClientSecret): Promise<void> {
    const ttlMs = secret.expiresAt - this.now();
    if (ttlMs <= 0) return;
    await this.redis.set(this.key(hash), JSON.stringify(secret), 'PX', ttlMs).catch((err: unknown) => {
      throw toStoreError('realtime.secret.put', err);
    });
  }

  async get(hash: string): Promise<ClientSecret | undefined> {
    const text = await this.redis.get(this.key(hash)).catch((err: unknown) => {
      throw toStoreError('realtime.secret.get', err);
    });
    if (text === null) return undefined;
    const secret = JSON.parse(text) as ClientSecret;
    return secret.expiresAt <= this.now() ? undefined : secret;
  }
}
