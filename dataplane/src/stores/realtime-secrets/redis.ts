/**
 * Client secrets in Redis, so a secret minted through one pod opens a session on any other:
 * one JSON value per secret hash, expiring with the secret (checked again by the pod's clock).
 * Each minting key has a sorted set of its live secrets (in its tenant's slot), which the
 * per-key cap is taken from atomically before the secret itself is written.
 */
import type { Redis } from 'ioredis';
import { toStoreError } from '../redis/client.ts';
import type { KeySpace } from '../redis/keys.ts';
import { arg, bindScript, int, type BoundScript, type LuaScript } from '../redis/script.ts';
import { systemClock, type Clock } from '../types.ts';
import type { ClientSecret, ClientSecretStore } from './types.ts';

/** KEYS[1] the key's index; ARGV: hash, expiry ms, now ms, ttl ms, cap. 1 = slot taken, 0 = at the cap. */
const takeSecretSlot: LuaScript = {
  name: 'gantryRealtimeSecretSlot',
  numberOfKeys: 1,
  lua: `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[3])
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[5]) then
  return 0
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[4]) then redis.call('PEXPIRE', KEYS[1], ARGV[4]) end
return 1
`,
};

export class RedisClientSecretStore implements ClientSecretStore {
  private readonly takeSlot: BoundScript;

  constructor(
    private readonly redis: Redis,
    private readonly keys: KeySpace,
    private readonly now: Clock = systemClock,
  ) {
    this.takeSlot = bindScript(redis, takeSecretSlot, 'realtime.secret.put');
  }

  private key(hash: string): string {
    return `${this.keys.prefix}:rtsecret:${encodeURIComponent(hash)}`;
  }

  async put(hash: string, secret: ClientSecret, maxPerKey: number): Promise<boolean> {
    const now = this.now();
    const ttlMs = secret.expiresAt - now;
    if (ttlMs <= 0) return true;
    const index = this.keys.realtimeSecrets({ tenant: secret.tenant, keyId: secret.keyId });
    const taken = await this.takeSlot(
      [index],
      [hash, arg(secret.expiresAt), arg(now), arg(ttlMs), arg(maxPerKey)],
    );
    if (int(taken, 'realtime secret slot') !== 1) return false;
    await this.redis.set(this.key(hash), JSON.stringify(secret), 'PX', ttlMs).catch((err: unknown) => {
      throw toStoreError('realtime.secret.put', err);
    });
    return true;
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
