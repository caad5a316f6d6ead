/**
 * In-process response store: the generic owned store (JSON copies, bounded by count, total
 * size and age, evicted fairly between tenants) keyed by the response id. The size bound
 * matters: each entry carries its whole conversation, so a long `previous_response_id` chain
 * grows quadratically; fairness matters because one tenant's chain must not push another
 * tenant's responses out. Responses live in one pod only: with several replicas use the
 * Redis store.
 */
import { MemoryOwnedStore } from '../owned/memory.ts';
import type { Owner } from '../owned/types.ts';
import type { Clock } from '../types.ts';
import type { ResponseObject } from '../../formats/responses/types.ts';
import { encodeRecord, parseResponse, RECORD_HEAD_CHARS, responseSpan } from './record.ts';
import type { OversizedResponse, ResponseOwner, ResponseStore, StoredResponse } from './types.ts';

export interface MemoryResponseStoreOptions {
  maxEntries?: number;
  /** Total characters of the stored JSON. */
  maxChars?: number;
  ttlMs?: number;
  clock?: Clock;
}

export const DEFAULT_MAX_RESPONSES = 10_000;
export const DEFAULT_MAX_RESPONSE_CHARS = 128 * 1024 * 1024;
/** OpenAI keeps stored responses for 30 days; an in-process store keeps them a day. */
export const DEFAULT_RESPONSE_TTL_MS = 24 * 60 * 60 * 1000;

const asOwner = (o: ResponseOwner): Owner => ({ tenant: o.tenant, keyId: o.keyHash });

export class MemoryResponseStore implements ResponseStore {
  private readonly store: MemoryOwnedStore<StoredResponse>;

  constructor(opts: MemoryResponseStoreOptions = {}) {
    this.store = new MemoryOwnedStore({
      maxEntries: opts.maxEntries ?? DEFAULT_MAX_RESPONSES,
      maxChars: opts.maxChars ?? DEFAULT_MAX_RESPONSE_CHARS,
      ttlMs: opts.ttlMs ?? DEFAULT_RESPONSE_TTL_MS,
      clock: opts.clock,
    });
  }

  put(owner: ResponseOwner, entry: StoredResponse): Promise<void> {
    return this.store.putJson(asOwner(owner), entry.response.id, encodeRecord(entry));
  }

  get(owner: ResponseOwner, id: string): Promise<StoredResponse | undefined> {
    return this.store.get(asOwner(owner), id);
  }

  async getWithin(
    owner: ResponseOwner,
    id: string,
    maxConversationBytes: number,
  ): Promise<StoredResponse | OversizedResponse | undefined> {
    return this.store.getWithin(asOwner(owner), id, maxConversationBytes);
  }

  async getResponse(owner: ResponseOwner, id: string): Promise<ResponseObject | undefined> {
    const head = await this.store.head(asOwner(owner), id, RECORD_HEAD_CHARS);
    if (head === undefined) return undefined;
    const span = responseSpan(head);
    if (!span) return (await this.store.get(asOwner(owner), id))?.response;
    const json = await this.store.slice(asOwner(owner), id, span.start, span.end);
    return json === undefined ? undefined : parseResponse(json);
  }

  delete(owner: ResponseOwner, id: string): Promise<boolean> {
    return this.store.delete(asOwner(owner), id);
  }
}
