/**
 * Cached answers. The vector index finds an entry id by similarity; this store holds what the
 * id stands for. Both are keyed by partition, and an entry is only ever read with the
 * partition it was written in (see partition.ts).
 */
import type { ChatCompletion } from '../../formats/openai/types.ts';

export interface CacheEntry {
  id: string;
  partition: string;
  /** ms since the epoch. */
  createdAt: number;
  /** ms since the epoch; the entry is gone (or ignored) from then on. */
  expiresAt: number;
  /** The question it answers (TWEAK shows it to the adapting model). */
  query: string;
  /** The answer in the canonical format; the route translates it like a live one. */
  response: ChatCompletion;
  /** Tokens of the call that produced it: what a hit saves. */
  promptTokens: number;
  completionTokens: number;
  /** The producing request's completion limit; a truncated answer only serves that same limit. */
  maxTokens: number | undefined;
  /** `x-gantry-cache-meta` of the producing request, returned as `x-gantrycache-matched-meta`. */
  meta: string | undefined;
}

export interface CacheStoreStats {
  backend: 'memory' | 'redis' | 'milvus';
  /** `unavailable` when the backing service cannot be reached (then the counts are 0). */
  status: 'ok' | 'unavailable';
  entries: number;
  /** Bytes the entries take (payload estimate; Redis per-key overhead not included). */
  memoryBytes: number;
  error?: string;
}

export interface CacheEntryStore {
  readonly backend: 'memory' | 'redis';
  /** The entry, or undefined when missing or expired. */
  get(partition: string, id: string): Promise<CacheEntry | undefined>;
  /**
   * Writes (or replaces) the entry until `entry.expiresAt`; an already expired entry is not
   * written. With `exact`, the exact-request digest (pipeline/cache/exact.ts) is written too,
   * pointing at this entry for the same lifetime: the same request again finds it without
   * being embedded.
   */
  put(entry: CacheEntry, exact?: string): Promise<void>;
  /**
   * The live entry an exact-request digest points at in this partition, or undefined: no such
   * digest, or its entry was flushed, evicted, deleted or has expired (a dangling digest is
   * simply a miss).
   */
  getExact(partition: string, digest: string): Promise<CacheEntry | undefined>;
  /** True when something was deleted. */
  delete(partition: string, id: string): Promise<boolean>;
  /** Deletes every entry, or every entry of one tenant; returns how many. */
  flush(tenant?: string): Promise<number>;
  /** Every tenant's entries, or one tenant's. Never rejects: an unreachable backend reports `status: 'unavailable'`. */
  stats(tenant?: string): Promise<CacheStoreStats>;
  close(): Promise<void>;
}
