/**
 * Stored Responses-API responses (`store: true`), for retrieval, deletion and
 * `previous_response_id` chaining. Every entry belongs to the tenant and the API key that
 * created it: a lookup under any other owner finds nothing, exactly like an unknown id.
 */
import type { ChatMessage } from '../../formats/openai/types.ts';
import type { ResponseObject } from '../../formats/responses/types.ts';

export interface ResponseOwner {
  tenant: string;
  /** Hex SHA-256 of the API key (never the key). */
  keyHash: string;
}

export interface StoredResponse {
  response: ResponseObject;
  /** The whole conversation up to and including this response's assistant turn, in chat form. */
  conversation: ChatMessage[];
  /** This response's own input items, as GET /v1/responses/{id}/input_items lists them. */
  input?: Record<string, unknown>[];
}

export interface ResponseStore {
  put(owner: ResponseOwner, entry: StoredResponse): Promise<void>;
  get(owner: ResponseOwner, id: string): Promise<StoredResponse | undefined>;
  /** True when the owner had a response with this id. */
  delete(owner: ResponseOwner, id: string): Promise<boolean>;
}

/** One string per (owner, id); NUL cannot occur in tenant names or hex hashes. */
export const ownedKey = (owner: ResponseOwner, id: string): string =>
  `${owner.tenant}\u0000${owner.keyHash}\u0000${id}`;
