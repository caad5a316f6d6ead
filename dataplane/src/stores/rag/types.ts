/**
 * RAG indexes: named collections of embedded chunks, each belonging to one tenant and API
 * key. Every operation takes the owner, and a search never reads another owner's chunks:
 * another tenant's (or key's) index of the same name is a different index.
 */
import type { Owner } from '../owned/types.ts';

export interface StoredChunk {
  documentId: string;
  filename: string;
  /** Position of the chunk in its document. */
  chunkIndex: number;
  text: string;
  /** Unit length. */
  vector: Float32Array;
}

export interface IndexInfo {
  /** The embedding model every chunk was embedded with; queries must use the same. */
  embeddingModel: string;
  dimensions: number;
  chunks: number;
  documents: number;
}

export interface ChunkHit {
  chunk: Omit<StoredChunk, 'vector'>;
  score: number;
}

export interface RagIndexStore {
  info(owner: Owner, index: string): Promise<IndexInfo | undefined>;
  /**
   * Adds one document's chunks; refuses (RagIndexFull) past the per-index bound, and
   * (RagStorageFull) past a per-tenant or store-wide bound where the store has one.
   */
  add(owner: Owner, index: string, embeddingModel: string, chunks: StoredChunk[]): Promise<IndexInfo>;
  /**
   * Throws what `add` would for `chunks` more chunks, so a document that cannot be kept is
   * refused before it is embedded (and charged). Optional: a store without it refuses in `add`.
   */
  checkRoom?(owner: Owner, index: string, chunks: number): Promise<void>;
  search(owner: Owner, index: string, probe: Float32Array, k: number): Promise<ChunkHit[]>;
  /** True when the owner's index held the document. */
  deleteDocument(owner: Owner, index: string, documentId: string): Promise<boolean>;
}

export class RagIndexFull extends Error {
  constructor(
    readonly limit: number,
    readonly held: number,
  ) {
    super(`the index holds ${held} chunks and may hold at most ${limit}`);
  }
}

/**
 * Past a bound shared by more than one index: the tenant's share of an in-process store, or
 * the whole store (every tenant together).
 */
export class RagStorageFull extends Error {
  constructor(
    readonly scope: 'tenant' | 'store',
    readonly limit: number,
    readonly held: number,
    readonly adding: number,
  ) {
    super(
      scope === 'tenant'
        ? `the tenant's indexes on this gateway hold ${held} chunks; adding ${adding} would pass the tenant quota of ${limit} chunks`
        : `the gateway's in-process RAG store holds ${held} chunks for all tenants; adding ${adding} would pass its limit of ${limit} chunks`,
    );
  }
}
