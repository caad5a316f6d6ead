/**
 * RAG indexes shared by every pod: vectors in a VectorIndex (Milvus, in a collection of its
 * own so the semantic cache's flushes never touch them) and chunk texts plus index records
 * in the owned-object store (Redis). The vector partition is derived from the tenant, the
 * key and the index name, and the owned store is keyed by tenant and key, so neither a
 * search nor a read can reach another owner's chunks. Room is taken from the shared chunk
 * ledger (quota/) before a document is embedded, so a tenant's quota and the store's total
 * hold across pods; a failed add hands its room back and removes what it had written.
 */
import { createHash } from 'node:crypto';
import { partitionKey } from '../cache-entries/partition.ts';
import type { Owner, OwnedStore } from '../owned/types.ts';
import type { VectorIndex } from '../vectors/types.ts';
import { RAG_HOLD_MS, type RagQuotaStore } from './quota/types.ts';
import {
  RagIndexFull,
  RagModelMismatch,
  RagStorageFull,
  type ChunkHit,
  type IndexInfo,
  type RagIndexStore,
  type RoomHold,
  type StoredChunk,
} from './types.ts';

/** Index records and chunk texts live as long as the vectors: effectively until deleted. */
export const RAG_KEEP_MS = 10 * 365 * 24 * 60 * 60 * 1000;

interface IndexRecord {
  embeddingModel: string;
  dimensions: number;
  /**
   * Chunks per document, by document id, of documents added before the chunk ledger kept
   * them (still read, and emptied as they are deleted); new documents are only in the ledger.
   */
  documents: Record<string, number>;
  /**
   * Set while the index is being deleted: searches find nothing, and its chunks stay counted
   * until they are erased, so a delete that fails halfway leaks nothing uncounted and a
   * retried delete finishes it.
   */
  deleting?: boolean;
}

interface ChunkRecord {
  documentId: string;
  filename: string;
  chunkIndex: number;
  text: string;
}

export type RagRecord = IndexRecord | ChunkRecord;

export interface SharedRagLimits {
  perIndex: number;
  /** All of one tenant's indexes, across every pod. */
  perTenant: number;
  /** Every tenant's indexes together: what Milvus is sized for. */
  total: number;
}

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

const legacyChunks = (r: IndexRecord): number => Object.values(r.documents).reduce((n, c) => n + c, 0);

/** Chunks per document id, in first-seen order. */
function perDocument(chunks: readonly StoredChunk[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const c of chunks) out.set(c.documentId, (out.get(c.documentId) ?? 0) + 1);
  return out;
}

export class VectorRagIndexStore implements RagIndexStore {
  constructor(
    private readonly vectors: VectorIndex,
    private readonly records: OwnedStore<RagRecord>,
    private readonly quota: RagQuotaStore,
    private readonly limits: SharedRagLimits,
    private readonly now: () => number = Date.now,
  ) {}

  private async record(owner: Owner, index: string): Promise<IndexRecord | undefined> {
    return (await this.records.get(owner, indexKey(index))) as IndexRecord | undefined;
  }

  /** The index as the ledger (and any legacy record entries) has it; undefined when empty. */
  async info(owner: Owner, index: string): Promise<IndexInfo | undefined> {
    const [r, counts] = await Promise.all([this.record(owner, index), this.quota.indexCounts(owner, index)]);
    if (!r) return undefined;
    const documents = counts.documents + Object.keys(r.documents).length;
    if (documents === 0) return undefined;
    return {
      embeddingModel: r.embeddingModel,
      dimensions: r.dimensions,
      chunks: counts.chunks + legacyChunks(r),
      documents,
    };
  }

  private static refuseOver(limit: number, info: IndexInfo | undefined, adding: number): void {
    const held = info?.chunks ?? 0;
    if (held + adding > limit) throw new RagIndexFull(limit, held);
  }

  /** Every bound in one atomic step of the ledger: two ingests cannot both take an index's last room. */
  async reserve(owner: Owner, index: string, chunks: number): Promise<RoomHold> {
    const r = await this.record(owner, index);
    const legacy = r ? legacyChunks(r) : 0;
    const taken = await this.quota.reserve(owner, index, chunks, this.limits, RAG_HOLD_MS, legacy);
    if (taken.ok) return { id: taken.id, chunks };
    if (taken.scope === 'index') throw new RagIndexFull(taken.limit, taken.used);
    throw new RagStorageFull(taken.scope, taken.limit, taken.used, chunks, true);
  }

  async release(hold: RoomHold): Promise<void> {
    await this.quota.release(hold.id);
  }

  async add(
    owner: Owner,
    index: string,
    embeddingModel: string,
    chunks: StoredChunk[],
    hold?: RoomHold,
  ): Promise<IndexInfo> {
    if (hold && hold.chunks < chunks.length)
      throw new Error(`a hold for ${hold.chunks} chunks cannot add ${chunks.length}`);
    const room = hold ?? (await this.reserve(owner, index, chunks.length));
    const documents = perDocument(chunks);
    const partition = ragPartition(owner, index);
    let wrote = false;
    let committed = false;
    try {
      // Again: another ingest into this index may have finished while this one embedded.
      const before = await this.info(owner, index);
      VectorRagIndexStore.refuseOver(this.limits.perIndex, before, chunks.length);
      // The record names the embedding model; an empty index takes the new document's.
      if (before && before.embeddingModel !== embeddingModel)
        throw new RagModelMismatch(index, before.embeddingModel);
      if (!before) await this.claim(owner, index, embeddingModel, chunks[0]?.vector.length ?? 0, room);
      const expiresAt = this.now() + RAG_KEEP_MS;
      wrote = true;
      // Texts first, vectors second, the ledger entry last: a search never finds a vector
      // whose text is missing, and a document counts only once it is whole. Each document is
      // its own ledger entry, so concurrent ingests into one index never overwrite each other.
      await inGroups(chunks, ({ vector: _v, ...text }) =>
        this.records.put(owner, chunkKey(index, text.documentId, text.chunkIndex), text),
      );
      await inGroups(chunks, (c) =>
        this.vectors.upsert(partition, vectorId(c.documentId, c.chunkIndex), c.vector, expiresAt),
      );
      committed = true;
      for (const [documentId, n] of documents) await this.quota.commit(owner, index, room.id, documentId, n);
      const now = await this.info(owner, index);
      if (!now) throw new Error(`index ${index} was deleted while the document was added`);
      return now;
    } catch (err) {
      // Best effort: the room back, the ledger and the partial writes undone. A step that
      // fails here too leaves at most this document's leftovers, which nothing counts.
      await this.quota.release(room.id).catch(() => undefined);
      if (committed)
        for (const documentId of documents.keys())
          await this.quota.forgetDocument(owner, index, documentId).catch(() => undefined);
      if (wrote) await this.erase(owner, index, chunks).catch(() => undefined);
      throw err;
    }
  }

  /**
   * Creates the record of an empty index atomically: of two first ingests with different
   * models, the second is refused. A record an emptied index left behind is taken over, unless
   * another ingest may be filling the index (room on hold beyond this one's) or it is being deleted.
   */
  private async claim(
    owner: Owner,
    index: string,
    embeddingModel: string,
    dimensions: number,
    room: RoomHold,
  ): Promise<void> {
    const fresh: IndexRecord = { embeddingModel, dimensions, documents: {} };
    if (await this.records.putIfAbsent(owner, indexKey(index), fresh)) return;
    const [r, counts] = await Promise.all([this.record(owner, index), this.quota.indexCounts(owner, index)]);
    if (!r || r.embeddingModel === embeddingModel) return;
    const emptied =
      counts.documents === 0 && counts.pending <= room.chunks && legacyChunks(r) === 0 && !r.deleting;
    if (!emptied) throw new RagModelMismatch(index, r.embeddingModel);
    await this.records.put(owner, indexKey(index), fresh);
  }

  /** Removes the texts and vectors of these chunks. */
  private async erase(
    owner: Owner,
    index: string,
    chunks: readonly Pick<StoredChunk, 'documentId' | 'chunkIndex'>[],
  ): Promise<void> {
    const partition = ragPartition(owner, index);
    await inGroups(chunks, async (c) => {
      await this.vectors.delete(partition, vectorId(c.documentId, c.chunkIndex));
      await this.records.delete(owner, chunkKey(index, c.documentId, c.chunkIndex));
    });
  }

  private static slots(documents: Map<string, number>): { documentId: string; chunkIndex: number }[] {
    const out: { documentId: string; chunkIndex: number }[] = [];
    for (const [documentId, n] of documents)
      for (let chunkIndex = 0; chunkIndex < n; chunkIndex++) out.push({ documentId, chunkIndex });
    return out;
  }

  async search(owner: Owner, index: string, probe: Float32Array, k: number): Promise<ChunkHit[]> {
    const r = await this.record(owner, index);
    if (!r || r.deleting) return [];
    const hits = await this.vectors.search(ragPartition(owner, index), probe, k);
    const parsed = hits.map((h) => {
      const cut = h.id.lastIndexOf(':');
      return { documentId: h.id.slice(0, cut), chunkIndex: Number(h.id.slice(cut + 1)), score: h.score };
    });
    // Only whole documents: a vector of one still being added, or being deleted, is skipped.
    const whole = await this.quota.present(owner, index, [...new Set(parsed.map((p) => p.documentId))]);
    const found = await Promise.all(
      parsed.map(async (h) => {
        if (!whole.has(h.documentId) && r.documents[h.documentId] === undefined) return undefined;
        const chunk = (await this.records.get(owner, chunkKey(index, h.documentId, h.chunkIndex))) as
          ChunkRecord | undefined;
        return chunk ? { chunk, score: h.score } : undefined;
      }),
    );
    return found.filter((x): x is ChunkHit => x !== undefined);
  }

  /**
   * Erases first and forgets last: the document stays counted (and a retry finds it) until
   * its chunks are gone. Two deletes racing for it both erase; the ledger frees it once.
   */
  async deleteDocument(owner: Owner, index: string, documentId: string): Promise<boolean> {
    const [r, counted] = await Promise.all([
      this.record(owner, index),
      this.quota.documentsOf(owner, index).then((d) => d.get(documentId)),
    ]);
    const legacy = r?.documents[documentId];
    if (legacy === undefined && counted === undefined) return false;
    const n = Math.max(legacy ?? 0, counted ?? 0);
    await this.erase(owner, index, VectorRagIndexStore.slots(new Map([[documentId, n]])));
    await this.quota.forgetDocument(owner, index, documentId);
    if (legacy !== undefined) {
      const now = await this.record(owner, index);
      if (now && now.documents[documentId] !== undefined) {
        delete now.documents[documentId];
        await this.records.put(owner, indexKey(index), now);
      }
    }
    return true;
  }

  /**
   * Marks the index deleting (its chunks still counted), erases them, then forgets them and
   * the record: a failure midway leaves a marked, counted index that a retried delete finishes.
   */
  async deleteIndex(owner: Owner, index: string): Promise<boolean> {
    const r = await this.record(owner, index);
    if (r && !r.deleting) await this.records.put(owner, indexKey(index), { ...r, deleting: true });
    const documents = await this.quota.documentsOf(owner, index);
    for (const [id, n] of Object.entries(r?.documents ?? {}))
      documents.set(id, Math.max(n, documents.get(id) ?? 0));
    await this.erase(owner, index, VectorRagIndexStore.slots(documents));
    for (const id of documents.keys()) await this.quota.forgetDocument(owner, index, id);
    if (r) {
      // A document another ingest committed meanwhile stays, and so does its index.
      const { deleting: _marked, ...kept } = r;
      if ((await this.quota.indexCounts(owner, index)).documents > 0)
        await this.records.put(owner, indexKey(index), { ...kept, documents: {} });
      else await this.records.delete(owner, indexKey(index));
    }
    return documents.size > 0 || r?.deleting === true;
  }
}
