/**
 * The ioredis client the stores share, tuned to fail fast: with Redis down a command rejects
 * at once (no offline queue, no per-request retries) and a hung server is cut off by the command
 * timeout, so money and limit stages can answer 503 instead of hanging. Reconnection goes on in
 * the background and the stores recover when Redis is back.
 */
import { createRequire } from 'node:module';
import type * as IoRedis from 'ioredis';
import type { Redis } from 'ioredis';
import { StoreUnavailableError } from '../errors.ts';

export interface RedisClientOptions {
  url: string;
  connectTimeoutMs?: number;
  commandTimeoutMs?: number;
  /** Connection errors are expected while Redis is down; this sees them (ioredis would print them otherwise). */
  onError?: (err: Error) => void;
}

/**
 * ioredis is required when a client is first made, not when this module loads: the bundle
 * imports every module at start-up, and a gateway without Redis never needs it.
 */
const requireCjs = createRequire(import.meta.url);
let RedisClass: typeof Redis | undefined;

export function createRedisClient(opts: RedisClientOptions): Redis {
  RedisClass ??= (requireCjs('ioredis') as typeof IoRedis).Redis;
  const client = new RedisClass(opts.url, {
    connectTimeout: opts.connectTimeoutMs ?? 1000,
    commandTimeout: opts.commandTimeoutMs ?? 1000,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    // A script whose reply was lost may already have run; resending could apply it twice.
    autoResendUnfulfilledCommands: false,
    // disconnect() destroys the socket at once rather than waiting up to 2 s for a hung server
    // to close it: its unanswered commands reject then, so a shutdown's settlements still
    // waiting on them fall back to the journal before it closes (gateway.ts).
    disconnectTimeout: 0,
    retryStrategy: (attempt) => Math.min(50 * attempt, 1000),
    lazyConnect: false,
  });
  client.on('error', opts.onError ?? (() => {}));
  return client;
}

/** Resolves once the client can take commands; rejects with StoreUnavailableError after `timeoutMs`. */
export function waitForReady(client: Redis, timeoutMs = 5000): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      client.off('ready', onReady);
      reject(
        new StoreUnavailableError('redis.connect', `not ready after ${timeoutMs} ms (${client.status})`),
      );
    }, timeoutMs);
    const onReady = () => {
      clearTimeout(timer);
      resolve();
    };
    client.once('ready', onReady);
  });
}

/**
 * Redis replies that mean "not serving right now" rather than "your command is wrong". OOM is a
 * full Redis under `noeviction` (the policy billing wants) and MISCONF one that cannot persist:
 * both refuse writes until an operator acts, so a charge they refuse is journaled and replayed,
 * not dropped as a script error (review finding: a full Redis lost every settlement).
 */
const TRANSIENT_REPLY = /^(LOADING|READONLY|MASTERDOWN|CLUSTERDOWN|TRYAGAIN|BUSY|NOREPLICAS|OOM|MISCONF)\b/;

/**
 * Maps a failed command to what the caller should see: StoreUnavailableError for anything that
 * is about reaching Redis, the original error for a real reply error (a bug in a script).
 */
export function toStoreError(operation: string, err: unknown): Error {
  if (err instanceof StoreUnavailableError) return err;
  if (err instanceof Error && err.name === 'ReplyError' && !TRANSIENT_REPLY.test(err.message)) return err;
  return new StoreUnavailableError(operation, err);
}
