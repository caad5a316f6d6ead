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
  /** Adds one document's chunks; refuses (RagIndexFull) past the per-index bound. */
  add(owner: Owner, index: string, embeddingModel: string, chunks: StoredChunk[]): Promise<IndexInfo>;
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
