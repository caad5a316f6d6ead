/**
 * Stored Responses-API responses (`store: true`), for retrieval, deletion and
 * `previous_response_id` chaining. Every entry belongs to the tenant and the API key that
 * created it: a lookup under any other owner finds nothing, exactly like an unknown id.
 */
import type { ChatMessage } from '../../formats/openai/types.ts';
import type { ResponseObject } from '../../formats/responses/types.ts';
import type { OversizedRecord } from '../size-head.ts';

export interface ResponseOwner {
  tenant: string;
  /** Hex SHA-256 of the API key (never the key). */
  keyHash: string;
}

export interface StoredResponse {
  /**
   * Bytes of `conversation` as JSON (UTF-8), recorded by the store when it serialises the
   * entry; absent on entries stored before sizes were recorded.
   */
  conversationBytes?: number;
  response: ResponseObject;
  /** The whole conversation up to and including this response's assistant turn, in chat form. */
  conversation: ChatMessage[];
  /** This response's own input items, as GET /v1/responses/{id}/input_items lists them. */
  input?: Record<string, unknown>[];
}

/** An entry whose conversation is past the size asked for: only its recorded size was read. */
export type OversizedResponse = OversizedRecord;

export interface ResponseStore {
  put(owner: ResponseOwner, entry: StoredResponse): Promise<void>;
  get(owner: ResponseOwner, id: string): Promise<StoredResponse | undefined>;
  /**
   * As `get`, but when the entry's recorded conversation size is past `maxConversationBytes`
   * only that size, read without loading or parsing the entry (a chain too long to continue
   * is refused at the cost of its first bytes, not of a multi-megabyte parse).
   */
  getWithin(
    owner: ResponseOwner,
    id: string,
    maxConversationBytes: number,
  ): Promise<StoredResponse | OversizedResponse | undefined>;
  /**
   * The response alone (GET /v1/responses/{id}), read from its place in the entry without
   * loading or parsing the conversation.
   */
  getResponse(owner: ResponseOwner, id: string): Promise<ResponseObject | undefined>;
  /** True when the owner had a response with this id. */
  delete(owner: ResponseOwner, id: string): Promise<boolean>;
}

/** One string per (owner, id); NUL cannot occur in tenant names or hex hashes. */
export const ownedKey = (owner: ResponseOwner, id: string): string =>
  `${owner.tenant}\u0000${owner.keyHash}\u0000${id}`;
