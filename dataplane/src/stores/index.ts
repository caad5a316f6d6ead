/**
 * The stores the data plane shares across requests (and, with Redis, across pods). Without a
 * Redis URL everything lives in process: the embedded default for a laptop or a single pod.
 */
import type { Redis } from 'ioredis';
import { SequentialAdmitter, type Admitter } from './admission.ts';
import { RedisAdmitter } from './redis/admission.ts';
import type { BudgetStore, BudgetStoreOptions } from './budget.ts';
import { MemoryBudgetStore } from './memory/budget.ts';
import { MemoryRateLimiter } from './memory/rate-limiter.ts';
import { MemoryState } from './memory/state.ts';
import { MemoryWalletStore } from './memory/wallet.ts';
import type { RateLimiter } from './rate-limiter.ts';
import { RedisBudgetStore } from './redis/budget.ts';
import { createRedisClient, waitForReady, type RedisClientOptions } from './redis/client.ts';
import { KeySpace } from './redis/keys.ts';
import { RedisRateLimiter } from './redis/rate-limiter.ts';
import { RedisWalletStore } from './redis/wallet.ts';
import { systemClock, type Clock } from './types.ts';
import type { WalletStore } from './wallet.ts';
import { MemoryResponseStore } from './responses/memory.ts';
import { RedisResponseStore } from './responses/redis.ts';
import type { ResponseStore } from './responses/types.ts';
import { MemoryOwnedStore } from './owned/memory.ts';
import { RedisOwnedStore } from './owned/redis.ts';
import type { OwnedStore } from './owned/types.ts';
import { MemoryOwnershipStore } from './ownership/memory.ts';
import { RedisOwnershipStore } from './ownership/redis.ts';
import type { OwnershipStore } from './ownership/types.ts';
import { MemoryVideoJobStore } from './video-jobs/memory.ts';
import { RedisVideoJobStore } from './video-jobs/redis.ts';
import type { VideoJobStore } from './video-jobs/types.ts';
import { MemoryClientSecretStore } from './realtime-secrets/memory.ts';
import { RedisClientSecretStore } from './realtime-secrets/redis.ts';
import type { ClientSecretStore } from './realtime-secrets/types.ts';
import { MemoryRagQuotaStore } from './rag/quota/memory.ts';
import { RedisRagQuotaStore } from './rag/quota/redis.ts';
import type { RagQuotaStore } from './rag/quota/types.ts';
import type { UsageStore } from '../accounting/usage.ts';
import { createMemoryUsageStore } from './usage/index.ts';
import { RedisUsageStore } from './usage/redis.ts';
import { RedisSettler } from './redis/settlement.ts';
import {
  memoryDeploymentWindows,
  redisDeploymentWindows,
  type DeploymentQuotaStore,
} from './deployment-quota.ts';
import type { Settler } from './settlement.ts';

export interface Stores {
  readonly kind: 'memory' | 'redis';
  readonly rateLimiter: RateLimiter;
  readonly budgets: BudgetStore;
  /** Rate limit and budget together, for a key with both (one round trip with Redis). */
  readonly admitter: Admitter;
  /**
   * Budget settle, rate adjust and usage record of a metered request in one step (one script,
   * one round trip). Only Redis has one; in process the stores are called one by one.
   */
  readonly settler?: Settler | undefined;
  readonly wallets: WalletStore;
  readonly usage: UsageStore;
  /** Stored Responses-API responses (`previous_response_id`, GET/DELETE /v1/responses/{id}). */
  readonly responses: ResponseStore;
  /**
   * Objects owned by a tenant and key (interactions, ...), one store per namespace: in
   * process, or shared through Redis. Asking twice for a namespace gives the same store.
   */
  owned<T>(namespace: string, opts?: OwnedStoreOptions): OwnedStore<T>;
  /** Who owns the files, batches, vector stores, assistants and containers kept upstream. */
  readonly ownership: OwnershipStore;
  /** Video jobs (`/v1/videos`): owner and the deployment holding each, for reads through any pod. */
  readonly videoJobs: VideoJobStore;
  /** Realtime client secrets Gantry minted, honoured by every pod while they last. */
  readonly realtimeSecrets: ClientSecretStore;
  /** Chunks held in shared RAG indexes, per tenant and in all, with holds taken before embedding. */
  readonly ragQuota: RagQuotaStore;
  /** Each deployment's provider quota window (ModelDeployment rpm/tpm), shared by pods through Redis. */
  readonly deploymentQuota: DeploymentQuotaStore;
  /** Resolves once the stores can serve (Redis connected); rejects with StoreUnavailableError on timeout. */
  ready(timeoutMs?: number): Promise<void>;
  /** Calls `listener` each time the shared store becomes reachable again (never for in-process stores). */
  onReconnect(listener: () => void): void;
  /** Closes the Redis connection if these stores own it. */
  close(): Promise<void>;
}

export interface OwnedStoreOptions {
  /** How long an object is kept (default a day). */
  ttlMs?: number;
}

const DEFAULT_OWNED_TTL_MS = 24 * 60 * 60 * 1000;

/** One store per namespace, made on first use. */
function ownedStores(make: (namespace: string, opts: OwnedStoreOptions) => OwnedStore<unknown>) {
  const made = new Map<string, OwnedStore<unknown>>();
  return <T>(namespace: string, opts: OwnedStoreOptions = {}): OwnedStore<T> => {
    let store = made.get(namespace);
    if (!store) made.set(namespace, (store = make(namespace, opts)));
    return store as OwnedStore<T>;
  };
}

export interface StoresOptions extends BudgetStoreOptions {
  clock?: Clock;
  /** The deployment quota windows' clock, when not `clock` (the gateway's injected clock). */
  deploymentClock?: Clock | undefined;
}

export interface RedisStoresOptions extends StoresOptions {
  /** Key namespace (default `gantry`); tests use a fresh one each. */
  prefix?: string;
}

/** With a `state` given, its own ledger bound applies (`ledgerMaxEntries` is for a new one). */
export function createMemoryStores(opts: StoresOptions & { state?: MemoryState } = {}): Stores {
  const state = opts.state ?? new MemoryState({ ledgerMaxEntries: opts.ledgerMaxEntries });
  const clock = opts.clock ?? systemClock;
  const rateLimiter = new MemoryRateLimiter(state, clock);
  const budgets = new MemoryBudgetStore(state, clock, opts);
  return {
    kind: 'memory',
    rateLimiter,
    budgets,
    admitter: new SequentialAdmitter(rateLimiter, budgets),
    wallets: new MemoryWalletStore(state, clock),
    usage: createMemoryUsageStore({ clock }),
    responses: new MemoryResponseStore({ clock }),
    owned: ownedStores(
      (_namespace, o) => new MemoryOwnedStore({ clock, ttlMs: o.ttlMs ?? DEFAULT_OWNED_TTL_MS }),
    ),
    ownership: new MemoryOwnershipStore(clock),
    videoJobs: new MemoryVideoJobStore({ clock }),
    realtimeSecrets: new MemoryClientSecretStore({ clock }),
    ragQuota: new MemoryRagQuotaStore(clock),
    deploymentQuota: memoryDeploymentWindows(opts.deploymentClock ?? clock),
    ready: async () => {},
    onReconnect: () => undefined,
    close: async () => {},
  };
}

/** Stores on an existing client (not closed by close()), or on a client of their own made from options. */
export function createRedisStores(client: Redis | RedisClientOptions, opts: RedisStoresOptions = {}): Stores {
  const owned = !('defineCommand' in client);
  const redis = owned ? createRedisClient(client) : client;
  const keys = new KeySpace(opts.prefix);
  const clock = opts.clock ?? systemClock;
  const rateLimiter = new RedisRateLimiter(redis, keys, clock);
  const budgets = new RedisBudgetStore(redis, keys, clock, opts);
  const usage = new RedisUsageStore(redis, keys, {}, clock);
  return {
    kind: 'redis',
    rateLimiter,
    budgets,
    admitter: new RedisAdmitter(redis, rateLimiter, budgets, clock),
    settler: new RedisSettler(redis, rateLimiter, budgets, usage),
    wallets: new RedisWalletStore(redis, keys, clock, opts.ledgerMaxEntries),
    usage,
    responses: new RedisResponseStore(redis, keys),
    owned: ownedStores(
      (namespace, o) => new RedisOwnedStore(redis, keys, namespace, o.ttlMs ?? DEFAULT_OWNED_TTL_MS),
    ),
    ownership: new RedisOwnershipStore(redis, keys, clock),
    videoJobs: new RedisVideoJobStore(redis, keys, clock),
    realtimeSecrets: new RedisClientSecretStore(redis, keys, clock),
    ragQuota: new RedisRagQuotaStore(redis, keys, clock),
    deploymentQuota: redisDeploymentWindows(redis, keys.prefix, opts.deploymentClock ?? clock),
    ready: (timeoutMs) => waitForReady(redis, timeoutMs),
    onReconnect: (listener) => void redis.on('ready', listener),
    close: async () => {
      if (owned) redis.disconnect();
    },
  };
}

/** Redis when a URL is configured, in-process otherwise. */
export function createStores(opts: RedisStoresOptions & { redisUrl?: string | undefined }): Stores {
  return opts.redisUrl ? createRedisStores({ url: opts.redisUrl }, opts) : createMemoryStores(opts);
}

export { StoreUnavailableError, isStoreUnavailable } from './errors.ts';
export { waitForReady } from './redis/client.ts';
export { MemoryState } from './memory/state.ts';
export type * from './budget.ts';
export { AdmissionStoreError, type Admitter, type AdmitResult } from './admission.ts';
export type { Settler, SettlementRequest } from './settlement.ts';
export type * from './rate-limiter.ts';
export type { DeploymentLimits, DeploymentQuotaStore } from './deployment-quota.ts';
export type * from './wallet.ts';
export type { KeyRef, Clock } from './types.ts';
export type { AutoRechargePolicy } from './recharge.ts';
export type { BudgetPeriod } from './period.ts';
export { formatUsd, fromMicros, roundUsd, toMicros } from './money.ts';
