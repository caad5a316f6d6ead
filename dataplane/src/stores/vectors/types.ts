/**
 * Nearest-neighbour search over cache vectors, by inner product, inside one partition at a
 * time. The cache stores entries as [q | c] and probes with [alpha·q | beta·c], so the score
 * returned is the DualScore itself (pipeline/cache/score.ts). A search never crosses a
 * partition and never returns an expired entry.
 */

export interface VectorHit {
  id: string;
  /** Inner product of the stored vector and the probe. */
  score: number;
}

export interface VectorIndexStats {
  backend: 'memory' | 'milvus';
  /** `unavailable` when the backing service cannot be reached (then the counts are 0). */
  status: 'ok' | 'unavailable';
  /** Stored vectors, expired ones not yet swept included. */
  entries: number;
  partitions?: number;
  /** Estimate of the bytes the vectors (and, in process, the graph) take. */
  memoryBytes: number;
  error?: string;
}

export interface VectorIndex {
  readonly backend: 'memory' | 'milvus';
  /** Adds the vector, or replaces the one stored under the same partition and id. */
  upsert(partition: string, id: string, vector: Float32Array, expiresAt: number): Promise<void>;
  /** Up to k unexpired hits, best first. An empty or unknown partition gives []. */
  search(partition: string, vector: Float32Array, k: number): Promise<VectorHit[]>;
  /** True when something was deleted. */
  delete(partition: string, id: string): Promise<boolean>;
  /** Deletes every vector, or every vector of one tenant; returns how many (Milvus: -1 when it cannot tell). */
  flush(tenant?: string): Promise<number>;
  /** Deletes expired vectors; returns how many (Milvus: -1 when it cannot tell). */
  sweep(): Promise<number>;
  /** Every tenant's vectors, or one tenant's. Never rejects: an unreachable backend reports `status: 'unavailable'`. */
  stats(tenant?: string): Promise<VectorIndexStats>;
  close(): Promise<void>;
}
