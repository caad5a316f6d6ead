/**
 * The chunk ledger of shared RAG indexes: how many chunks each tenant holds (and all tenants
 * together), plus holds taken before a document is embedded. A hold is what makes the quota
 * hold across pods: room is taken atomically before any embedding token is spent, so two
 * pods racing for a tenant's last slots cannot both be admitted, and a failed ingest hands
 * its room back. Every document's chunk count is kept per index, so a delete frees exactly
 * what was counted (a second, concurrent delete of the same document frees nothing); this
 * per-index list is also what says which documents an index holds, because one atomic entry
 * per document cannot lose a concurrent ingest the way a read-modify-written record does.
 */
import type { Owner } from '../../owned/types.ts';

export interface RagQuotaLimits {
  /** Chunks one index may hold (committed and on hold). */
  perIndex: number;
  /** Chunks one tenant may hold in all its indexes (every key of the tenant). */
  perTenant: number;
  /** Chunks every tenant together may hold. */
  total: number;
}

/** Held chunks plus holds not yet committed or returned. */
export interface RagUsage {
  tenant: number;
  total: number;
}

export type ReserveResult =
  { ok: true; id: string } | { ok: false; scope: 'index' | 'tenant' | 'store'; limit: number; used: number };

export interface RagQuotaStore {
  /**
   * Takes room for `chunks` chunks in the owner's index (and so its tenant), or says which
   * bound refuses it; `legacy` chunks the index holds outside the ledger count against its
   * bound too. The hold lapses after `holdMs` if neither committed nor released (a pod that
   * died mid-ingest does not keep the room forever).
   */
  reserve(
    owner: Owner,
    index: string,
    chunks: number,
    limits: RagQuotaLimits,
    holdMs: number,
    legacy?: number,
  ): Promise<ReserveResult>;
  /** Turns a hold into held chunks of one document (counted even if the hold had lapsed). */
  commit(owner: Owner, index: string, holdId: string, documentId: string, chunks: number): Promise<void>;
  /** Returns a hold's room; a hold already committed, returned or lapsed is left alone. */
  release(holdId: string): Promise<void>;
  /** The documents of an index with their chunk counts, left as they are (a delete reads before it erases). */
  documentsOf(owner: Owner, index: string): Promise<Map<string, number>>;
  /** Forgets one document; returns the chunks it held (0 when the ledger did not have it). */
  forgetDocument(owner: Owner, index: string, documentId: string): Promise<number>;
  usage(tenant: string): Promise<RagUsage>;
  /** The documents and chunks the ledger holds for one index, and the chunks on hold for it. */
  indexCounts(owner: Owner, index: string): Promise<IndexCounts>;
  /** Which of these documents the index holds. */
  present(owner: Owner, index: string, documentIds: readonly string[]): Promise<Set<string>>;
}

/** How long a hold outlives its ingest at most: embedding 4,096 chunks with retries takes minutes. */
export const RAG_HOLD_MS = 15 * 60_000;

export interface IndexCounts {
  documents: number;
  chunks: number;
  pending: number;
}

/** The refusal for a reservation: the narrowest bound is checked (and named) first. */
export function refusal(
  used: RagUsage & { index: number },
  adding: number,
  limits: RagQuotaLimits,
): Extract<ReserveResult, { ok: false }> | undefined {
  if (used.index + adding > limits.perIndex)
    return { ok: false, scope: 'index', limit: limits.perIndex, used: used.index };
  if (used.tenant + adding > limits.perTenant)
    return { ok: false, scope: 'tenant', limit: limits.perTenant, used: used.tenant };
  if (used.total + adding > limits.total)
    return { ok: false, scope: 'store', limit: limits.total, used: used.total };
  return undefined;
}
