/** The chunk ledger in process: one pod's view, for a gateway without Redis and for tests. */
import { newId } from '../../ids.ts';
import { ownedKey, type Owner } from '../../owned/types.ts';
import { systemClock, type Clock } from '../../types.ts';
import {
  refusal,
  type IndexCounts,
  type RagQuotaLimits,
  type RagQuotaStore,
  type RagUsage,
  type ReserveResult,
} from './types.ts';

interface Hold {
  tenant: string;
  /** ownedKey of the index. */
  index: string;
  chunks: number;
  expiresAt: number;
}

export class MemoryRagQuotaStore implements RagQuotaStore {
  private readonly holds = new Map<string, Hold>();
  /** Tenant → chunks held by committed documents. */
  private readonly held = new Map<string, number>();
  /** ownedKey(owner, index) → document id → chunks. */
  private readonly documents = new Map<string, Map<string, number>>();

  constructor(private readonly now: Clock = systemClock) {}

  private lapse(): void {
    const now = this.now();
    for (const [id, h] of this.holds) if (h.expiresAt <= now) this.holds.delete(id);
  }

  private add(tenant: string, delta: number): void {
    const n = Math.max(0, (this.held.get(tenant) ?? 0) + delta);
    if (n > 0) this.held.set(tenant, n);
    else this.held.delete(tenant);
  }

  async usage(tenant: string): Promise<RagUsage> {
    return this.used(tenant);
  }

  /** Synchronous, so no other reservation can slip in between the count and the hold. */
  private used(tenant: string): RagUsage {
    this.lapse();
    let t = this.held.get(tenant) ?? 0;
    let total = 0;
    for (const n of this.held.values()) total += n;
    for (const h of this.holds.values()) {
      total += h.chunks;
      if (h.tenant === tenant) t += h.chunks;
    }
    return { tenant: t, total };
  }

  async reserve(
    owner: Owner,
    index: string,
    chunks: number,
    limits: RagQuotaLimits,
    holdMs: number,
    legacy = 0,
  ): Promise<ReserveResult> {
    const key = ownedKey(owner, index);
    const inIndex = this.counts(key);
    const used = { ...this.used(owner.tenant), index: inIndex.chunks + inIndex.pending + legacy };
    const refused = refusal(used, chunks, limits);
    if (refused) return refused;
    const id = newId();
    this.holds.set(id, { tenant: owner.tenant, index: key, chunks, expiresAt: this.now() + holdMs });
    return { ok: true, id };
  }

  async commit(
    owner: Owner,
    index: string,
    holdId: string,
    documentId: string,
    chunks: number,
  ): Promise<void> {
    this.holds.delete(holdId);
    const key = ownedKey(owner, index);
    const docs = this.documents.get(key) ?? new Map<string, number>();
    this.add(owner.tenant, chunks - (docs.get(documentId) ?? 0));
    docs.set(documentId, chunks);
    this.documents.set(key, docs);
  }

  async release(holdId: string): Promise<void> {
    this.holds.delete(holdId);
  }

  async documentsOf(owner: Owner, index: string): Promise<Map<string, number>> {
    return new Map(this.documents.get(ownedKey(owner, index)));
  }

  async forgetDocument(owner: Owner, index: string, documentId: string): Promise<number> {
    const key = ownedKey(owner, index);
    const docs = this.documents.get(key);
    const n = docs?.get(documentId);
    if (!docs || n === undefined) return 0;
    docs.delete(documentId);
    if (docs.size === 0) this.documents.delete(key);
    this.add(owner.tenant, -n);
    return n;
  }

  async indexCounts(owner: Owner, index: string): Promise<IndexCounts> {
    return this.counts(ownedKey(owner, index));
  }

  private counts(key: string): IndexCounts {
    this.lapse();
    const docs = this.documents.get(key);
    let chunks = 0;
    for (const n of docs?.values() ?? []) chunks += n;
    let pending = 0;
    for (const h of this.holds.values()) if (h.index === key) pending += h.chunks;
    return { documents: docs?.size ?? 0, chunks, pending };
  }

  async present(owner: Owner, index: string, documentIds: readonly string[]): Promise<Set<string>> {
    const docs = this.documents.get(ownedKey(owner, index));
    return new Set(documentIds.filter((id) => docs?.has(id)));
  }
}
