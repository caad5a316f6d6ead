/**
 * Cache vectors in Milvus (shared by every pod), through @zilliz/milvus2-sdk-node.
 *
 * One collection per vector length (`<prefix>_<dim>`, created on first use, so switching
 * embedders never mixes lengths): primary key = hash of (partition, id), the partition as
 * Milvus partition key (searches touch only its shard and filter on it exactly), the tenant
 * (for flush by tenant), `expires_at` (ms) and the vector, indexed for inner product. Every
 * search filters `partition == <key> and expires_at > now`, so it can neither cross a
 * partition nor return an expired entry; sweep() deletes the expired ones.
 *
 * Fails fast: no SDK retries, a short deadline per call; StoreUnavailableError when the
 * server cannot be reached (errors.ts).
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type * as Milvus from '@zilliz/milvus2-sdk-node';
import type { MilvusClient } from '@zilliz/milvus2-sdk-node';
import {
  assertPartition,
  encodeSegment,
  MAX_PARTITION_LENGTH,
  partitionTenantSegment,
} from '../../cache-entries/partition.ts';
import { systemClock, type Clock } from '../../types.ts';
import type { VectorHit, VectorIndex, VectorIndexStats } from '../types.ts';
import { checkStatus, MilvusRequestError, toMilvusError } from './errors.ts';

export type MilvusConsistency = 'Strong' | 'Session' | 'Bounded' | 'Eventually';

export interface MilvusVectorIndexOptions {
  /** `host:port` of Milvus (or Milvus Lite's server). */
  address: string;
  token?: string;
  username?: string;
  password?: string;
  database?: string;
  /** Collection name prefix (default `gantry_cache`); tests use a fresh one each. */
  prefix?: string;
  /** Deadline of each call (default 2000 ms). */
  timeoutMs?: number;
  /**
   * Read consistency (default Bounded: a pod may not see another pod's write of the last
   * moments, which for a cache only costs a miss). Tests use Strong.
   */
  consistency?: MilvusConsistency;
  clock?: Clock;
}

const MAX_ID_LENGTH = 256;
/** Bytes per stored row besides the vector: key, id, partition, tenant, expiry, index overhead (rough). */
const ROW_OVERHEAD_BYTES = 256;
const COLLECTION_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Replies meaning the collection we remember is gone or unloaded. */
const COLLECTION_GONE = /CollectionNotExists|collection not found|does not exist|not loaded|NotLoaded/i;

/** A string literal for a Milvus boolean expression. */
const literal = (s: string) => JSON.stringify(s);

/**
 * The SDK (gRPC, protobufs and a 17 MB BSON buffer: about 40 MB of RSS) is required when an
 * index is built: the bundle imports every module at start-up, and a gateway without Milvus
 * must not carry it.
 */
const requireCjs = createRequire(import.meta.url);
type MilvusSdk = typeof Milvus;
let loadedSdk: MilvusSdk | undefined;
const milvusSdk = (): MilvusSdk => (loadedSdk ??= requireCjs('@zilliz/milvus2-sdk-node') as MilvusSdk);

export class MilvusVectorIndex implements VectorIndex {
  readonly backend = 'milvus';
  private readonly client: MilvusClient;
  private readonly prefix: string;
  private readonly clock: Clock;
  private readonly timeoutMs: number;
  private readonly consistency: MilvusConsistency;
  /** Vector length → its collection, ready (created, indexed, loaded). */
  private readonly collections = new Map<number, Promise<string>>();

  constructor(opts: MilvusVectorIndexOptions) {
    this.prefix = opts.prefix ?? 'gantry_cache';
    if (!COLLECTION_NAME.test(this.prefix))
      throw new TypeError(`bad Milvus collection prefix ${opts.prefix}`);
    this.clock = opts.clock ?? systemClock;
    this.timeoutMs = opts.timeoutMs ?? 2000;
    this.consistency = opts.consistency ?? 'Bounded';
    this.client = new (milvusSdk().MilvusClient)({
      address: opts.address,
      token: opts.token,
      username: opts.username,
      password: opts.password,
      database: opts.database,
      timeout: this.timeoutMs,
      maxRetries: 0,
      logLevel: 'error',
      // The SDK's heartbeat would report to the server in the background, where a dead server's
      // error has no caller to land on.
      telemetry: { enabled: false },
    });
    // The client connects at construction; when Milvus is down then, that promise rejects
    // before any call awaits it, and an unhandled rejection would take the process down.
    // Calls still see the failure (they await the same promise) and fail open.
    (this.client as unknown as { connectPromise?: Promise<unknown> }).connectPromise?.catch(() => undefined);
  }

  private async call<T>(operation: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw toMilvusError(operation, err);
    }
  }

  private primaryKey(partition: string, id: string): string {
    return createHash('sha256').update(`${partition}\n${id}`).digest('hex');
  }

  private collection(dim: number): Promise<string> {
    let ready = this.collections.get(dim);
    if (!ready) {
      ready = this.ensureCollection(dim);
      this.collections.set(dim, ready);
      // A failure (Milvus down) must not stick: the next call tries again.
      ready.catch(() => this.collections.delete(dim));
    }
    return ready;
  }

  private async ensureCollection(dim: number): Promise<string> {
    const name = `${this.prefix}_${dim}`;
    return this.call('vectors.collection', async () => {
      const has = await this.client.hasCollection({ collection_name: name });
      checkStatus('vectors.collection', has.status);
      if (!has.value) {
        const { DataType } = milvusSdk();
        const created = await this.client.createCollection({
          collection_name: name,
          fields: [
            { name: 'pk', data_type: DataType.VarChar, is_primary_key: true, max_length: 64 },
            { name: 'entry_id', data_type: DataType.VarChar, max_length: MAX_ID_LENGTH },
            {
              name: 'partition',
              data_type: DataType.VarChar,
              max_length: MAX_PARTITION_LENGTH,
              is_partition_key: true,
            },
            { name: 'tenant', data_type: DataType.VarChar, max_length: MAX_PARTITION_LENGTH },
            { name: 'expires_at', data_type: DataType.Int64 },
            { name: 'vector', data_type: DataType.FloatVector, dim },
          ],
          consistency_level: this.consistency,
        });
        // Another pod may have created it meanwhile: that is success too.
        if (!/already exist/i.test(created.reason ?? '')) checkStatus('vectors.collection', created);
        const indexed = await this.client.createIndex({
          collection_name: name,
          field_name: 'vector',
          index_type: 'AUTOINDEX',
          metric_type: 'IP',
        });
        if (!/already exist|at most one distinct index/i.test(indexed.reason ?? ''))
          checkStatus('vectors.collection', indexed);
      } else {
        const described = await this.client.describeCollection({ collection_name: name });
        checkStatus('vectors.collection', described.status);
        const field = described.schema.fields.find((f) => f.name === 'vector');
        const actual = Number(field?.type_params?.find((p) => p.key === 'dim')?.value ?? field?.dim);
        if (actual !== dim)
          throw new Error(`Milvus collection ${name} holds ${actual}-dimensional vectors, not ${dim}`);
      }
      checkStatus('vectors.collection', await this.client.loadCollection({ collection_name: name }));
      return name;
    });
  }

  /**
   * Runs `fn` on the collection for vectors of `dim`. When Milvus lost the collection (a
   * restarted Milvus Lite, someone dropped or released it), forgets it, recreates it and
   * runs `fn` once more.
   */
  private async onCollection<T>(dim: number, fn: (name: string) => Promise<T>): Promise<T> {
    try {
      return await fn(await this.collection(dim));
    } catch (err) {
      if (!(err instanceof MilvusRequestError) || !COLLECTION_GONE.test(`${err.errorCode} ${err.message}`))
        throw err;
      this.collections.delete(dim);
      return fn(await this.collection(dim));
    }
  }

  async upsert(partition: string, id: string, vector: Float32Array, expiresAt: number): Promise<void> {
    assertPartition(partition);
    if (id.length === 0 || id.length > MAX_ID_LENGTH)
      throw new RangeError(`cache entry id of ${id.length} chars`);
    if (expiresAt <= this.clock()) {
      await this.delete(partition, id);
      return;
    }
    const row = {
      pk: this.primaryKey(partition, id),
      entry_id: id,
      partition,
      tenant: partitionTenantSegment(partition),
      expires_at: Math.floor(expiresAt),
      vector: Array.from(vector),
    };
    await this.onCollection(vector.length, async (name) => {
      const res = await this.call('vectors.upsert', () =>
        this.client.upsert({ collection_name: name, data: [row] }),
      );
      checkStatus('vectors.upsert', res.status);
    });
  }

  async search(partition: string, vector: Float32Array, k: number): Promise<VectorHit[]> {
    assertPartition(partition);
    if (k <= 0) return [];
    const data = [Array.from(vector)];
    const filter = `partition == ${literal(partition)} and expires_at > ${Math.floor(this.clock())}`;
    const res = await this.onCollection(vector.length, async (name) => {
      const r = await this.call('vectors.search', () =>
        this.client.search({
          collection_name: name,
          data,
          limit: k,
          filter,
          output_fields: ['entry_id'],
          metric_type: 'IP',
          consistency_level: milvusSdk().ConsistencyLevelEnum[this.consistency],
        }),
      );
      checkStatus('vectors.search', r.status);
      return r;
    });
    const rows = (res.results ?? []) as { score: number; entry_id?: unknown }[];
    return rows
      .filter((r) => typeof r.entry_id === 'string')
      .map((r) => ({ id: r.entry_id as string, score: Number(r.score) }))
      .sort((a, b) => b.score - a.score);
  }

  /** The collections this index owns (one per vector length ever used). */
  private async ownCollections(operation: string): Promise<string[]> {
    const res = await this.call(operation, () => this.client.showCollections());
    checkStatus(operation, res.status);
    const pattern = new RegExp(`^${this.prefix}_\\d+$`);
    return (res.data ?? []).map((c) => c.name).filter((n) => pattern.test(n));
  }

  private async deleteWhere(operation: string, filter: string): Promise<number> {
    let total = 0;
    for (const name of await this.ownCollections(operation)) {
      const n = await this.onCollection(Number(name.slice(this.prefix.length + 1)), async (loaded) => {
        const res = await this.call(operation, () => this.client.delete({ collection_name: loaded, filter }));
        checkStatus(operation, res.status);
        return Number(res.delete_cnt);
      });
      total = total < 0 || !Number.isFinite(n) ? -1 : total + n;
    }
    return total;
  }

  async delete(partition: string, id: string): Promise<boolean> {
    assertPartition(partition);
    const pk = literal(this.primaryKey(partition, id));
    return (await this.deleteWhere('vectors.delete', `pk == ${pk}`)) !== 0;
  }

  async flush(tenant?: string): Promise<number> {
    const filter = tenant === undefined ? 'expires_at >= 0' : `tenant == ${literal(encodeSegment(tenant))}`;
    return this.deleteWhere('vectors.flush', filter);
  }

  async sweep(): Promise<number> {
    return this.deleteWhere('vectors.sweep', `expires_at <= ${Math.floor(this.clock())}`);
  }

  async stats(tenant?: string): Promise<VectorIndexStats> {
    try {
      let entries = 0;
      let memoryBytes = 0;
      const filter = tenant === undefined ? undefined : `tenant == ${literal(encodeSegment(tenant))}`;
      for (const name of await this.ownCollections('vectors.stats')) {
        const res = await this.call('vectors.stats', () =>
          this.client.count(
            filter === undefined ? { collection_name: name } : { collection_name: name, expr: filter },
          ),
        );
        checkStatus('vectors.stats', res.status);
        const dim = Number(name.slice(this.prefix.length + 1));
        entries += Number(res.data);
        memoryBytes += Number(res.data) * (dim * 4 + ROW_OVERHEAD_BYTES);
      }
      return { backend: 'milvus', status: 'ok', entries, memoryBytes };
    } catch (err) {
      const e = toMilvusError('vectors.stats', err);
      return { backend: 'milvus', status: 'unavailable', entries: 0, memoryBytes: 0, error: e.message };
    }
  }

  /** Resolves when Milvus answers a health check; rejects with StoreUnavailableError otherwise. */
  async ready(): Promise<void> {
    const res = await this.call('vectors.health', () => this.client.checkHealth());
    if (!res.isHealthy)
      throw toMilvusError('vectors.health', new Error(`UNAVAILABLE: ${res.reasons.join(', ')}`));
  }

  async close(): Promise<void> {
    await this.client.closeConnection().catch(() => {});
  }
}
