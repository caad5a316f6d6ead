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

/**
 * Room taken for one document before it is embedded (and charged): `add` consumes it,
 * `release` hands it back when the ingest fails first. Opaque to callers.
 */
export interface RoomHold {
  readonly chunks: number;
  readonly id: string;
}

export interface RagIndexStore {
  info(owner: Owner, index: string): Promise<IndexInfo | undefined>;
  /**
   * Takes room for `chunks` more chunks, or throws what `add` would: RagIndexFull past the
   * per-index bound, RagStorageFull past the tenant's quota or the store's total. Two ingests
   * cannot both take the last room.
   */
  reserve(owner: Owner, index: string, chunks: number): Promise<RoomHold>;
  /** Hands back a hold `add` did not consume; a consumed or returned hold is left alone. */
  release(hold: RoomHold): Promise<void>;
  /**
   * Adds one document's chunks within `hold` (taken by `reserve` for this many chunks), or
   * without one after reserving itself, refusing as `reserve` does.
   */
  add(
    owner: Owner,
    index: string,
    embeddingModel: string,
    chunks: StoredChunk[],
    hold?: RoomHold,
  ): Promise<IndexInfo>;
  search(owner: Owner, index: string, probe: Float32Array, k: number): Promise<ChunkHit[]>;
  /** True when the owner's index held the document. */
  deleteDocument(owner: Owner, index: string, documentId: string): Promise<boolean>;
  /** Deletes every document of the owner's index; true when it had any. */
  deleteIndex(owner: Owner, index: string): Promise<boolean>;
}

export class RagIndexFull extends Error {
  constructor(
    readonly limit: number,
    readonly held: number,
  ) {
    super(`the index holds ${held} chunks and may hold at most ${limit}`);
  }
}

/** The index was (concurrently) created with another embedding model than the document's. */
export class RagModelMismatch extends Error {
  constructor(
    readonly index: string,
    readonly embeddingModel: string,
  ) {
    super(`index ${index} was built with embedding model ${embeddingModel}`);
  }
}

/**
 * Past a bound shared by more than one index: the tenant's quota, or the whole store (every
 * tenant together): one pod's in-process store, or the store every pod shares. The store
 * scope's message names no numbers: what every tenant together holds is not one tenant's
 * business (`held` and `limit` stay on the error for the gateway's own log).
 */
export class RagStorageFull extends Error {
  constructor(
    readonly scope: 'tenant' | 'store',
    readonly limit: number,
    readonly held: number,
    readonly adding: number,
    readonly shared = false,
  ) {
    super(
      scope === 'tenant'
        ? `the tenant's indexes ${shared ? '' : 'on this gateway '}hold ${held} chunks${shared ? ' (documents being ingested included)' : ''}; adding ${adding} would pass the tenant quota of ${limit} chunks`
        : `the gateway's ${shared ? 'shared' : 'in-process'} RAG store is full; it cannot take ${adding} more chunks now`,
    );
  }
}
