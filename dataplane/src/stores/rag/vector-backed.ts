/**
 * RAG indexes shared by every pod: vectors in a VectorIndex (Milvus, in a collection of its
 * own so the semantic cache's flushes never touch them) and chunk texts plus index records
 * in the owned-object store (Redis). The vector partition is derived from the tenant, the
 * key and the index name, and the owned store is keyed by tenant and key, so neither a
 * search nor a read can reach another owner's chunks.
 */
import { createHash } from 'node:crypto';
import { partitionKey } from '../cache-entries/partition.ts';
import type { Owner, OwnedStore } from '../owned/types.ts';
import type { VectorIndex } from '../vectors/types.ts';
import {
  RagIndexFull,
  type ChunkHit,
  type IndexInfo,
  type RagIndexStore,
  type StoredChunk,
} from './types.ts';

/** Index records and chunk texts live as long as the vectors: effectively until deleted. */
export const RAG_KEEP_MS = 10 * 365 * 24 * 60 * 60 * 1000;

interface IndexRecord {
  embeddingModel: string;
  dimensions: number;
  /** Chunks per document, by document id. */
  documents: Record<string, number>;
}

interface ChunkRecord {
  documentId: string;
  filename: string;
  chunkIndex: number;
  text: string;
}

export type RagRecord = IndexRecord | ChunkRecord;

const hash = (s: string): string => createHash('sha256').update(s).digest('base64url').slice(0, 43);

/** One vector partition per (tenant, key, index): the tenant readable, the rest hashed. */
export const ragPartition = (owner: Owner, index: string): string =>
  partitionKey(owner.tenant, 'rag', hash(`${owner.keyId}\u0000${index}`));

const indexKey = (index: string): string => `index\u0000${index}`;
const chunkKey = (index: string, documentId: string, i: number): string =>
  `chunk\u0000${index}\u0000${documentId}\u0000${i}`;
const vectorId = (documentId: string, i: number): string => `${documentId}:${i}`;

/** Writes GROUP at a time: a 4,096-chunk document is 64 round trips deep, not 4,096. */
const GROUP = 64;
async function inGroups<T>(items: readonly T[], write: (item: T) => Promise<unknown>): Promise<void> {
  for (let at = 0; at < items.length; at += GROUP) await Promise.all(items.slice(at, at + GROUP).map(write));
}

const infoOf = (r: IndexRecord): IndexInfo => ({
  embeddingModel: r.embeddingModel,
  dimensions: r.dimensions,
  chunks: Object.values(r.documents).reduce((n, c) => n + c, 0),
  documents: Object.keys(r.documents).length,
});

export class VectorRagIndexStore implements RagIndexStore {
  constructor(
    private readonly vectors: VectorIndex,
    private readonly records: OwnedStore<RagRecord>,
    private readonly maxChunksPerIndex: number,
    private readonly now: () => number = Date.now,
  ) {}

  private async record(owner: Owner, index: string): Promise<IndexRecord | undefined> {
    return (await this.records.get(owner, indexKey(index))) as IndexRecord | undefined;
  }

  async info(owner: Owner, index: string): Promise<IndexInfo | undefined> {
    const r = await this.record(owner, index);
    return r && Object.keys(r.documents).length > 0 ? infoOf(r) : undefined;
  }

  async add(owner: Owner, index: string, embeddingModel: string, chunks: StoredChunk[]): Promise<IndexInfo> {
    const r = (await this.record(owner, index)) ?? {
      embeddingModel,
      dimensions: chunks[0]?.vector.length ?? 0,
      documents: {},
    };
    const held = infoOf(r).chunks;
    if (held + chunks.length > this.maxChunksPerIndex) throw new RagIndexFull(this.maxChunksPerIndex, held);
    const partition = ragPartition(owner, index);
    const expiresAt = this.now() + RAG_KEEP_MS;
    // Texts first, vectors second, the index record last: a search never finds a vector
    // whose text is missing, and a document counts only once it is whole.
    await inGroups(chunks, ({ vector: _v, ...text }) =>
      this.records.put(owner, chunkKey(index, text.documentId, text.chunkIndex), text),
    );
    await inGroups(chunks, (c) =>
      this.vectors.upsert(partition, vectorId(c.documentId, c.chunkIndex), c.vector, expiresAt),
    );
    for (const c of chunks) r.documents[c.documentId] = (r.documents[c.documentId] ?? 0) + 1;
    await this.records.put(owner, indexKey(index), r);
    return infoOf(r);
  }

  async search(owner: Owner, index: string, probe: Float32Array, k: number): Promise<ChunkHit[]> {
    const r = await this.record(owner, index);
    if (!r) return [];
    const hits = await this.vectors.search(ragPartition(owner, index), probe, k);
    const found = await Promise.all(
      hits.map(async (h) => {
        const cut = h.id.lastIndexOf(':');
        const documentId = h.id.slice(0, cut);
        if (r.documents[documentId] === undefined) return undefined;
        const chunk = (await this.records.get(
          owner,
          chunkKey(index, documentId, Number(h.id.slice(cut + 1))),
        )) as ChunkRecord | undefined;
        return chunk ? { chunk, score: h.score } : undefined;
      }),
    );
    return found.filter((x): x is ChunkHit => x !== undefined);
  }

  async deleteDocument(owner: Owner, index: string, documentId: string): Promise<boolean> {
    const r = await this.record(owner, index);
    const count = r?.documents[documentId];
    if (!r || count === undefined) return false;
    // The record first: from here on searches skip the document's leftovers.
    delete r.documents[documentId];
    if (Object.keys(r.documents).length === 0) await this.records.delete(owner, indexKey(index));
    else await this.records.put(owner, indexKey(index), r);
    const partition = ragPartition(owner, index);
    for (let i = 0; i < count; i++) {
      await this.vectors.delete(partition, vectorId(documentId, i));
      await this.records.delete(owner, chunkKey(index, documentId, i));
    }
    return true;
  }
}
